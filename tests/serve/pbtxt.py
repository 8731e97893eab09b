"""A small protobuf text format reader for Triton model configurations (config.pbtxt).

Reads what Triton's own configs and tensorrtllm_backend's templates use: `field: scalar`,
`field { ... }` / `field: { ... }`, `field [ ... ]` / `field: [ ... ]` lists of scalars or
messages, repeated fields, `#` comments, double-quoted strings, enum identifiers, numbers and
the templates' unfilled `${placeholder}`s (kept as Placeholder values).

A message is a list of Field(name, value, line); line is 1-based in the parsed text.
"""
import collections
import re

Field = collections.namedtuple("Field", "name value line")


class Placeholder(str):
    """An unfilled ${name} of a template (the string is the name)."""


class EmptyList(list):
    """An empty `[ ]` (kept so that `shape: [ ]` stays a field)."""


class Enum(str):
    """An unquoted identifier value (TYPE_INT32, KIND_CPU, true)."""


_TOKEN = re.compile(r'''
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<comment>\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<placeholder>\$\{[A-Za-z0-9_]+\})
  | (?P<number>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<punct>[{}\[\]:,;<>])
''', re.VERBOSE)


class ParseError(ValueError):
    pass


def _tokens(text):
    line, pos = 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ParseError("line %d: unexpected %r" % (line, text[pos:pos + 20]))
        pos = m.end()
        kind = m.lastgroup
        if kind == "nl":
            line += 1
        elif kind not in ("ws", "comment"):
            yield kind, m.group(), line


def _unquote(s):
    body = s[1:-1]
    return re.sub(r'\\(.)', lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


class _Parser:
    def __init__(self, text):
        self.toks = list(_tokens(text))
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise ParseError("line %s: expected %r, got %r" % (tok[2], value, tok[1]))
        self.i += 1
        return tok

    def message(self, close):
        fields = []
        while True:
            kind, val, line = self.peek()
            if val == close or kind is None:
                if close is not None:
                    self.take(close)
                return fields
            if kind != "ident":
                raise ParseError("line %s: expected a field name, got %r" % (line, val))
            self.take()
            if self.peek()[1] == ":":
                self.take(":")
            values = self.value()
            for v in values:
                fields.append(Field(val, v, line))
            if not values:
                fields.append(Field(val, EmptyList(), line))
            if self.peek()[1] in (",", ";"):
                self.take()

    def scalar(self):
        kind, val, line = self.take()
        if kind == "string":
            out = _unquote(val)
            while self.peek()[0] == "string":  # adjacent strings concatenate
                out += _unquote(self.take()[1])
            if re.fullmatch(r"\$\{[A-Za-z0-9_]+\}", out):  # "${name}": a template's string placeholder
                return Placeholder(out[2:-1])
            return out
        if kind == "placeholder":
            return Placeholder(val[2:-1])
        if kind == "number":
            return float(val) if re.search(r"[.eE]", val) else int(val)
        if kind == "ident":
            return Enum(val)
        raise ParseError("line %s: unexpected %r" % (line, val))

    def value(self):
        """The values of one field occurrence (a list: [ ... ] gives several)."""
        tok = self.peek()[1]
        if tok in ("{", "<"):
            self.take()
            return [self.message("}" if tok == "{" else ">")]
        if tok == "[":
            self.take("[")
            out = []
            while self.peek()[1] != "]":
                if self.peek()[1] in ("{", "<"):
                    out.extend(self.value())
                else:
                    out.append(self.scalar())
                if self.peek()[1] == ",":
                    self.take(",")
            self.take("]")
            return out
        return [self.scalar()]


def parse(text):
    """The top-level message of a config.pbtxt text."""
    return _Parser(text).message(None)


def all_of(message, name):
    return [f.value for f in message if f.name == name]


def fields_of(message, name):
    return [f for f in message if f.name == name]


def one(message, name, default=None):
    values = all_of(message, name)
    if len(values) > 1:
        raise ParseError("field %s repeated" % name)
    return values[0] if values else default


def parameters(message):
    """Triton's map<string, ModelParameter> parameters: {key: (string_value, line)}."""
    out = {}
    for f in fields_of(message, "parameters"):
        value = one(f.value, "value", [])
        out[one(f.value, "key")] = (one(value, "string_value"), f.line)
    return out


def placeholders(message):
    """Every Placeholder anywhere in a message."""
    found = []
    for f in message:
        if isinstance(f.value, list):
            found.extend(placeholders(f.value))
        elif isinstance(f.value, Placeholder):
            found.append(str(f.value))
    return found
