// Kernel parameter types and the kernel's own name from its Itanium-mangled device name.
//
// libiberty's demangler (Debian's libiberty-dev, the one GDB and binutils use) parses the name
// into a component tree in which substitutions (S_, S0_) are already resolved to the types they
// stand for; the full grammar (templates, packs, decltype, ABI tags) is its job, not ours.
// This file only walks the tree of the function type: each parameter is a pointer/reference,
// a builtin scalar with a known size, a template parameter (resolved against the function's
// template arguments, packs expanded), or something whose size the name does not say (a class
// or enum passed by value).
#include "mangled_signature.hpp"

// glibc declares basename itself (with C++ overloads); tell libiberty.h not to redeclare it.
#define HAVE_DECL_BASENAME 1
#include <libiberty/demangle.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

namespace simgpu::detail {
namespace {

using Component = demangle_component;

const Component* left(const Component* c) { return c->u.s_binary.left; }
const Component* right(const Component* c) { return c->u.s_binary.right; }

struct BuiltinScalar {
  std::string_view printed;
  ParamType type;
  std::size_t size;
};

// Builtin types as libiberty prints them (x86-64 sizes; nvcc's device ABI matches the host's).
constexpr BuiltinScalar kBuiltins[] = {
    {"bool", ParamType::Bool, 1},
    {"char", ParamType::Signed, 1},
    {"signed char", ParamType::Signed, 1},
    {"unsigned char", ParamType::Unsigned, 1},
    {"short", ParamType::Signed, 2},
    {"unsigned short", ParamType::Unsigned, 2},
    {"int", ParamType::Signed, 4},
    {"unsigned int", ParamType::Unsigned, 4},
    {"long", ParamType::Signed, 8},
    {"unsigned long", ParamType::Unsigned, 8},
    {"long long", ParamType::Signed, 8},
    {"unsigned long long", ParamType::Unsigned, 8},
    {"__int128", ParamType::Signed, 16},
    {"unsigned __int128", ParamType::Unsigned, 16},
    {"wchar_t", ParamType::Signed, 4},
    {"char8_t", ParamType::Unsigned, 1},
    {"char16_t", ParamType::Unsigned, 2},
    {"char32_t", ParamType::Unsigned, 4},
    {"float", ParamType::Float, 4},
    {"double", ParamType::Float, 8},
    {"long double", ParamType::Float, 16},
    {"__float128", ParamType::Float, 16},
    {"half", ParamType::Float, 2},
    {"_Float16", ParamType::Float, 2},
    {"std::bfloat16_t", ParamType::Float, 2},
    {"decltype(nullptr)", ParamType::Pointer, 8},
};

std::string print(const Component* c) {
  std::size_t allocated = 0;
  char* text = cplus_demangle_print(DMGL_PARAMS | DMGL_ANSI, const_cast<Component*>(c), 32, &allocated);
  if (text == nullptr) return {};
  std::string result(text);
  std::free(text);
  return result;
}

class SignatureWalker {
 public:
  explicit SignatureWalker(const Component* template_args) : template_args_(template_args) {}

  // Appends the parameter(s) `type` stands for; false if the tree has a shape not handled.
  bool addParams(const Component* type, std::vector<ParamInfo>& out) {
    if (type->type == DEMANGLE_COMPONENT_PACK_EXPANSION) {
      const Component* pack = findPack(left(type));
      if (pack == nullptr) return false;
      for (const Component* element = pack; element != nullptr; element = right(element)) {
        pack_element_ = left(element);
        ParamInfo info;
        if (!classify(left(type), info)) return false;
        out.push_back(info);
      }
      pack_element_ = nullptr;
      return true;
    }
    ParamInfo info;
    if (!classify(type, info)) return false;
    out.push_back(info);
    return true;
  }

 private:
  const Component* templateArg(long index) const {
    const Component* arg = template_args_;
    for (long i = 0; arg != nullptr && i < index; ++i) arg = right(arg);
    return arg == nullptr ? nullptr : left(arg);
  }

  // The argument pack a pack expansion's pattern expands over (the TEMPLATE_ARGLIST bound to
  // the first template parameter found in it).
  const Component* findPack(const Component* pattern) const {
    for (const Component* c = pattern; c != nullptr;) {
      if (c->type == DEMANGLE_COMPONENT_TEMPLATE_PARAM) {
        const Component* arg = templateArg(c->u.s_number.number);
        return arg != nullptr && arg->type == DEMANGLE_COMPONENT_TEMPLATE_ARGLIST ? arg : nullptr;
      }
      switch (c->type) {
        case DEMANGLE_COMPONENT_POINTER:
        case DEMANGLE_COMPONENT_REFERENCE:
        case DEMANGLE_COMPONENT_RVALUE_REFERENCE:
        case DEMANGLE_COMPONENT_CONST:
        case DEMANGLE_COMPONENT_VOLATILE:
        case DEMANGLE_COMPONENT_RESTRICT:
          c = left(c);
          break;
        default:
          return nullptr;
      }
    }
    return nullptr;
  }

  bool classify(const Component* c, ParamInfo& info) {
    switch (c->type) {
      case DEMANGLE_COMPONENT_POINTER:
      case DEMANGLE_COMPONENT_REFERENCE:
      case DEMANGLE_COMPONENT_RVALUE_REFERENCE:
        info.type = ParamType::Pointer;
        info.size = 8;
        return true;
      case DEMANGLE_COMPONENT_CONST:
      case DEMANGLE_COMPONENT_VOLATILE:
      case DEMANGLE_COMPONENT_RESTRICT:
      case DEMANGLE_COMPONENT_VENDOR_TYPE_QUAL:
        return classify(left(c), info);
      case DEMANGLE_COMPONENT_BUILTIN_TYPE:
      case DEMANGLE_COMPONENT_EXTENDED_BUILTIN_TYPE: {
        const std::string printed = print(c);
        for (const BuiltinScalar& b : kBuiltins)
          if (printed == b.printed) {
            info.type = b.type;
            info.size = b.size;
            return true;
          }
        info.type = ParamType::Other;  // a builtin simgpu does not size (e.g. vendor types)
        info.size = 0;
        return true;
      }
      case DEMANGLE_COMPONENT_TEMPLATE_PARAM: {
        const Component* arg = templateArg(c->u.s_number.number);
        if (arg != nullptr && arg->type == DEMANGLE_COMPONENT_TEMPLATE_ARGLIST) arg = pack_element_;
        if (arg == nullptr) return false;
        return classify(arg, info);
      }
      case DEMANGLE_COMPONENT_PTRMEM_TYPE:
      case DEMANGLE_COMPONENT_ARRAY_TYPE:
      case DEMANGLE_COMPONENT_FUNCTION_TYPE:
      case DEMANGLE_COMPONENT_PACK_EXPANSION:
        return false;  // not a kernel parameter in practice: refuse rather than guess
      default:
        info.type = ParamType::Other;  // a class, enum or vector type: size unknown
        info.size = 0;
        return true;
    }
  }

  const Component* template_args_;
  const Component* pack_element_ = nullptr;
};

// The innermost name of a (possibly qualified, templated, tagged) function name.
const Component* ownName(const Component* name, const Component** template_args) {
  for (;;) {
    switch (name->type) {
      case DEMANGLE_COMPONENT_TEMPLATE:
        if (*template_args == nullptr) *template_args = right(name);
        name = left(name);
        break;
      case DEMANGLE_COMPONENT_QUAL_NAME:
      case DEMANGLE_COMPONENT_LOCAL_NAME:
        name = right(name);
        break;
      case DEMANGLE_COMPONENT_TAGGED_NAME:
      case DEMANGLE_COMPONENT_CLONE:
        name = left(name);
        break;
      default:
        return name;
    }
  }
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

}  // namespace

KernelSignature describeMangledName(const std::string& mangled) {
  KernelSignature k;
  k.name = mangled;
  if (mangled.rfind("_Z", 0) != 0) return k;  // extern "C": the name is all there is

  void* memory = nullptr;
  const Component* root = cplus_demangle_v3_components(mangled.c_str(), DMGL_PARAMS, &memory);
  std::unique_ptr<void, FreeDeleter> owner(memory);
  if (root == nullptr || root->type != DEMANGLE_COMPONENT_TYPED_NAME) return k;

  const Component* template_args = nullptr;
  const Component* name = ownName(left(root), &template_args);
  if (name->type == DEMANGLE_COMPONENT_NAME)
    k.name.assign(name->u.s_name.s, static_cast<std::size_t>(name->u.s_name.len));
  else
    k.name = print(name);

  const Component* function = right(root);
  if (function == nullptr || function->type != DEMANGLE_COMPONENT_FUNCTION_TYPE) return k;
  SignatureWalker walker(template_args);
  std::vector<ParamInfo> params;
  for (const Component* arg = right(function); arg != nullptr; arg = right(arg)) {
    const Component* type = left(arg);
    if (type == nullptr) continue;
    if (type->type == DEMANGLE_COMPONENT_BUILTIN_TYPE && print(type) == "void" && params.empty() &&
        right(arg) == nullptr)
      break;  // f(void): no parameters
    if (!walker.addParams(type, params)) return k;
  }

  // CUDA lays parameters out with their natural alignment, like a C struct.
  std::size_t offset = 0;
  bool sizes_known = true;
  for (ParamInfo& p : params) {
    if (p.size == 0) {
      sizes_known = false;
      continue;
    }
    offset = (offset + p.size - 1) / p.size * p.size;
    p.offset = offset;
    offset += p.size;
  }
  k.params = std::move(params);
  k.params_known = true;
  k.layout_known = sizes_known;
  k.params_bytes = sizes_known ? offset : 0;
  return k;
}

}  // namespace simgpu::detail
