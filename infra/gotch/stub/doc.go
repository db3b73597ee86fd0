// Command stub rewrites gotch's generated C wrappers
// (libtch/torch_api_generated.cpp.h) so that the wrappers of torch functions
// missing from the installed libtorch throw instead of failing to compile.
//
// gotch v0.9.1 is generated against libtorch 2.x; Debian ships 1.13.1, which
// lacks about a hundred of the wrapped functions. Each wrapper runs its body
// inside PROTECT(...), which catches a C++ exception and stores its message
// as the error gotch returns to Go, so a stub that throws inside PROTECT
// keeps the symbol (c-generated.go still links) and turns a call into an
// ordinary Go error.
//
// Three subcommands, used by infra/gotch/patch.sh and infra/gotch/find-stubs.sh:
//
//	stub apply -in FILE [-zip ZIP] -out FILE -list LIST -reason TEXT
//	stub find  -src FILE -diag FILE
//	stub extract -zip ZIP -sum h1:HASH -out DIR
//
// extract checks the module zip against its pinned go.sum hash and unpacks
// it: the build uses that copy through a replace directive, never the
// module cache, which stays as go downloaded it.
//
// apply is deterministic: the output depends only on the input file and the
// list, and applying it to its own output changes nothing.
package main
