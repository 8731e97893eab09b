"""What the GitOps engines' health readers do, shared by engine_logic.py and the replay.

lua_literal: an object as a Lua 5.1 table literal, for running the generated health Lua the way
argo-cd util/lua/lua.go ExecuteHealthLua binds `obj`. Escapes are three digits: "\\10" followed by
a digit would otherwise read as another escape.
job_reader: fluxcd/pkg e2cfd1a runtime/statusreaders/job.go jobConditions (a suspended Job is
Current).
"""


def lua_literal(v):
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + "".join(c if c.isalnum() or c in " -_./:=" else "\\%03d" % ord(c) for c in v) + '"'
    if isinstance(v, (list, set, tuple)):
        return "{" + ", ".join(lua_literal(x) for x in v) + "}"
    return "{" + ", ".join("[%s] = %s" % (lua_literal(k), lua_literal(x)) for k, x in v.items()) + "}"


def job_reader(obj):
    if (obj.get("spec") or {}).get("suspend") is True:
        return "Current"  # "Job is suspended"
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Complete" and c.get("status") == "True":
            return "Current"
        if c.get("type") == "Failed" and c.get("status") == "True":
            return "Failed"
    return "InProgress"
