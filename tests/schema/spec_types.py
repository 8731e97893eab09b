#!/usr/bin/env python3
"""compiler/spec_types.{h,cc} are generated from the normalized contract
(scripts/update-spec-types, issue #48 item 4): the committed files are what
the contract makes, and a change of the contract reaches the C++ types -- a
field's type, whether it is required (plain or std::optional), a new field --
except a profile's option (x-nemoc-profiles), which stays the profile's: C++
names no profile option (issue #48 item 1).

  spec_types.py SOURCE_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
UPDATE = os.path.join(ROOT, 'scripts', 'update-spec-types')
CONTRACT = 'schemas/contracts/normalized-spec.schema.json'

r = subprocess.run([sys.executable, UPDATE, '--check', '--root', ROOT], capture_output=True, text=True)
if r.returncode != 0:
    print(r.stderr.strip() or r.stdout.strip())
    sys.exit(1)

with tempfile.TemporaryDirectory(prefix='nemoc-spec-types-') as tmp:
    os.makedirs(os.path.join(tmp, 'schemas', 'contracts'))
    os.makedirs(os.path.join(tmp, 'compiler'))
    shutil.copy(os.path.join(ROOT, CONTRACT), os.path.join(tmp, CONTRACT))
    for rel in ('compiler/spec_types.h', 'compiler/spec_types.cc'):
        shutil.copy(os.path.join(ROOT, rel), os.path.join(tmp, rel))
    contract = json.load(open(os.path.join(tmp, CONTRACT)))
    train = contract['definitions']['train']
    train['properties']['seqLength'] = {'type': 'number'}                 # a type changes
    train['required'].remove('maxSteps')                                 # no longer required
    train['properties']['tokensPerStep'] = {'type': 'integer'}            # a new field, required
    train['required'].append('tokensPerStep')
    target = contract['definitions']['target']['properties']
    options = sorted(name for name, sub in target.items() if 'x-nemoc-profiles' in sub)
    if not options:
        print('the contract marks no profile option (x-nemoc-profiles) of spec.targets[]')
        sys.exit(1)
    target['ibPartition'] = {'type': 'string', 'x-nemoc-profiles': ['aks-nd']}  # a new profile's option
    target['clusterRegion'] = {'type': 'string'}                                 # a field every target has
    json.dump(contract, open(os.path.join(tmp, CONTRACT), 'w'))
    r = subprocess.run([sys.executable, UPDATE, '--check', '--root', tmp], capture_output=True, text=True)
    if r.returncode != 1:
        print('update-spec-types --check did not notice a changed contract')
        sys.exit(1)
    subprocess.run([sys.executable, UPDATE, '--root', tmp], check=True, capture_output=True)
    header = open(os.path.join(tmp, 'compiler/spec_types.h')).read()
    source = open(os.path.join(tmp, 'compiler/spec_types.cc')).read()
    for expected in ('  double seq_length{};  // seqLength\n',
                     '  std::optional<int64_t> max_steps{};  // maxSteps\n',
                     '  int64_t tokens_per_step{};  // tokensPerStep\n'):
        if expected not in header:
            print('the changed contract did not reach compiler/spec_types.h: no %r' % expected.strip())
            sys.exit(1)
    if '  std::optional<std::string> cluster_region{};  // clusterRegion\n' not in header:
        print('a new field of spec.targets[] did not reach struct Target')
        sys.exit(1)
    # struct Target and its reader (struct TargetStageNodes* have fields of their own).
    declared = header[header.index('struct Target {'):]
    declared = declared[:declared.index('\n};')]
    reader = source[source.index('bool Read(const nlohmann::json& j, Target* out'):]
    reader = reader[:reader.index('\n}\n')]
    for option in options + ['ibPartition']:
        if '// ' + option + '\n' in declared or '"' + option + '"' in reader:
            print('profile option %s reached struct Target: C++ would name a profile option' % option)
            sys.exit(1)
    if '"name"' not in reader or '// storage\n' not in declared:
        print('struct Target lacks the fields every target has')
        sys.exit(1)
    # Required: read by Member into the plain member (std::optional members may be absent).
    if 'if (!Member(j, "tokensPerStep", &out->tokens_per_step, err, at)) return false;' not in source:
        print('compiler/spec_types.cc does not read the new field')
        sys.exit(1)
print('compiler/spec_types.{h,cc} are what the normalized contract makes, and follow it')
