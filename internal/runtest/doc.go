// Package runtest is what the tests of run and its rooms share: the
// fixture machine's table and policy, and a set of clients holding one
// fake adapter. It imports no run package, so that run's own tests can
// use it too.
package runtest
