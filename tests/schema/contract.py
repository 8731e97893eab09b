#!/usr/bin/python3
"""The normalized spec's contract agrees with the input schema (issue #48 item 4).

schemas/project.schema.json is where a field's default lives (the normalizer
fills them: compiler/normalizer.cc Normalize, InputSchema::FillDefaults);
schemas/contracts/normalized-spec.schema.json says what the Jsonnet libraries
may rely on. Walking both at every place of a spec, this test fails when they
disagree:

  1. a field the input schema defaults is not required by the contract there
     (the libraries would guard a field that is always present, or the
     contract forgets a guarantee);
  2. a field the input schema has is missing from the contract (a closed
     contract object would refuse a valid spec);
  3. an enum differs (the libraries would be told of values a spec cannot
     have, or not told of one it can).

Exit 0 when they agree, 1 with each disagreement named by its place.
"""
import json
import os
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUT = json.load(open(os.path.join(ROOT, 'schemas/project.schema.json')))
CONTRACT = json.load(open(os.path.join(ROOT, 'schemas/contracts/normalized-spec.schema.json')))

problems = []
places = set()


def resolve(node, root):
    """The schema a node stands for: $ref followed (siblings kept), allOf parts merged."""
    seen = 0
    while isinstance(node, dict) and '$ref' in node and seen < 32:
        ref = node['$ref']
        assert ref.startswith('#/definitions/'), ref
        target = root['definitions'][ref[len('#/definitions/'):]]
        merged = dict(target)
        merged.update({k: v for k, v in node.items() if k != '$ref'})
        node = merged
        seen += 1
    if isinstance(node, dict) and 'allOf' in node:
        merged = {k: v for k, v in node.items() if k != 'allOf'}
        for part in node['allOf']:
            if isinstance(part, dict) and part.get('x-nemoc-editor-only'):
                continue
            part = resolve(part, root)
            for key, value in part.items():
                if key == 'properties':
                    merged.setdefault('properties', {})
                    merged['properties'] = dict(value, **merged['properties'])
                elif key == 'required':
                    merged['required'] = sorted(set(merged.get('required', [])) | set(value))
                else:
                    merged.setdefault(key, value)
        node = merged
    return node


def has_default(node):
    return isinstance(node, dict) and ('default' in node or 'default' in resolve(node, INPUT))


def walk(inp, con, place, depth=0):
    if depth > 24:
        return
    inp = resolve(inp, INPUT)
    con = resolve(con, CONTRACT)
    if not isinstance(inp, dict) or not isinstance(con, dict):
        return
    places.add(place)
    if 'enum' in inp and 'enum' in con and sorted(map(json.dumps, inp['enum'])) != sorted(map(json.dumps, con['enum'])):
        problems.append('%s: the input schema allows %s, the contract %s' % (place, inp['enum'], con['enum']))
    properties = inp.get('properties', {})
    con_properties = con.get('properties', {})
    required = set(con.get('required', []))
    for key, schema in properties.items():
        here = place + '.' + key
        if isinstance(schema, dict) and 'x-nemoc-profiles' in schema:
            # A profile's option: present only on that profile's targets; the
            # contract types it where a profile reads it (or leaves it open).
            if key in con_properties:
                walk(schema, con_properties[key], here, depth + 1)
            continue
        if key not in con_properties:
            if con.get('additionalProperties', True) is False:
                problems.append('%s: in the input schema, missing from the contract (a closed object there)' % here)
            continue
        if has_default(schema) and key not in required:
            problems.append('%s: the input schema defaults it (normalization fills it), the contract does not require it'
                            % here)
        walk(schema, con_properties[key], here, depth + 1)
    # Maps (labels, env, stages of your own): their values.
    if isinstance(inp.get('additionalProperties'), dict) and isinstance(con.get('additionalProperties'), dict):
        walk(inp['additionalProperties'], con['additionalProperties'], place + '.*', depth + 1)
    if isinstance(inp.get('items'), dict) and isinstance(con.get('items'), dict):
        walk(inp['items'], con['items'], place + '[]', depth + 1)


walk(INPUT, CONTRACT, 'spec-file')
if problems:
    print('schemas/project.schema.json and schemas/contracts/normalized-spec.schema.json disagree:')
    for p in problems:
        print('  ' + p)
    sys.exit(1)
# The walk reached the spec's depths (a broken resolver would agree vacuously).
for deep in ('spec-file.spec.stages.train.optimizer.lr', 'spec-file.spec.targets[].storage',
             'spec-file.spec.stages.serve.triton', 'spec-file.spec.gitops.flux'):
    if deep not in places:
        print('the walk never reached %s' % deep)
        sys.exit(1)
print('the normalized contract agrees with the input schema at %d places' % len(places))

# The contract is generated (scripts/update-normalized-contract): the committed
# file is what the input schema and the overlay make, and a field added to the
# input schema reaches it -- typed as the input types it, required where the
# input defaults it -- without a word in the overlay.
import shutil
import subprocess
import tempfile
UPDATE = os.path.join(ROOT, 'scripts', 'update-normalized-contract')
r = subprocess.run([sys.executable, UPDATE, '--check', '--root', ROOT], capture_output=True, text=True)
if r.returncode != 0:
    print(r.stderr.strip())
    sys.exit(1)
with tempfile.TemporaryDirectory(prefix='nemoc-contract-') as tmp:
    os.makedirs(os.path.join(tmp, 'schemas', 'contracts'))
    for rel in ('schemas/project.schema.json', 'schemas/contracts/normalized-overlay.json',
                'schemas/contracts/normalized-spec.schema.json'):
        shutil.copy(os.path.join(ROOT, rel), os.path.join(tmp, rel))
    changed = json.load(open(os.path.join(tmp, 'schemas/project.schema.json')))
    changed['definitions']['monitoring']['properties']['scrapeInterval'] = {
        'description': 'How often.', 'type': 'string', 'pattern': '^[0-9]+s$', 'default': '30s'}
    json.dump(changed, open(os.path.join(tmp, 'schemas/project.schema.json'), 'w'))
    r = subprocess.run([sys.executable, UPDATE, '--check', '--root', tmp], capture_output=True, text=True)
    if r.returncode != 1:
        print('update-normalized-contract --check did not notice a field added to the input schema')
        sys.exit(1)
    subprocess.run([sys.executable, UPDATE, '--root', tmp], check=True)
    monitoring = json.load(open(os.path.join(tmp, 'schemas/contracts/normalized-spec.schema.json')))['definitions']['monitoring']
    added = monitoring['properties'].get('scrapeInterval')
    if added != {'description': 'How often.', 'type': 'string', 'pattern': '^[0-9]+s$'} or \
            'scrapeInterval' not in monitoring.get('required', []):
        print('a defaulted field added to the input schema reached the contract as %s (required: %s)'
              % (added, monitoring.get('required')))
        sys.exit(1)
print('the contract is generated from the input schema and schemas/contracts/normalized-overlay.json')
