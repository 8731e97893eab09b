// my-runtime declaring a longer pod-name suffix than any name leaves room
// for: the output check refuses the workload (tests/extending_test.cc).
(import 'my-runtime.libsonnet') + {
  name: 'long-suffix',
  podNameSuffix(o):: 60,
}
