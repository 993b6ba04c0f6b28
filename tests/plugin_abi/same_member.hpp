// One member of the project's declaration of an NCCL plugin struct against NCCL's own: the same
// offset and the same size, checked at compile time (the layout tests of tests/plugin_abi).
#pragma once

#include <cstddef>

#define SAME_MEMBER(ours, real, member)                                     \
  static_assert(offsetof(ours, member) == offsetof(real, member), #member); \
  static_assert(sizeof(ours::member) == sizeof(real::member), #member " size")
