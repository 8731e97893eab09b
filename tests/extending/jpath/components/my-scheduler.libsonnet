// A platform component that exists only under --jpath: the worked example
// of docs/extending.md, built by tests/extending_test.cc. my-runtime's kind
// needs it (runtimes/my-runtime.libsonnet platform), so every cluster a
// my-runtime target runs on installs it, after JobSet (needs), with the
// values its release pins and what it provides in SUMMARY.md.
local component = import 'nemoc/component.libsonnet';

component + {
  name: 'my-scheduler',
  repo: 'https://github.com/example/my-scheduler.git',
  tag: 'v0.3.0',
  version: 'v0.3.0',
  path: 'charts/my-scheduler',
  kind: 'helm',
  namespace: 'my-scheduler-system',
  // Its admission webhook reads JobSets: JobSet comes first.
  needs: ['jobset'],
  provides:: ['example.com/gang'],
  // What platform_releases.json holds for a built-in component.
  release:: {
    release: 'oci://ghcr.io/example/charts/my-scheduler:0.3.0',
    pins: { 'image.tag': 'v0.3.0' },
  },
}
