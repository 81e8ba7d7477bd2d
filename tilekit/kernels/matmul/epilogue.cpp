#include "tilekit/kernels/matmul/epilogue.hpp"

namespace tilekit {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::none: return "none";
    case Activation::relu: return "relu";
    case Activation::leaky_relu: return "leaky_relu";
    case Activation::silu: return "silu";
    case Activation::gelu: return "gelu";
  }
  return "?";
}

std::string Epilogue::name() const {
  if (!bias) return activation_name(act);
  if (act == Activation::none) return "bias";
  return std::string("bias+") + activation_name(act);
}

const char* Epilogue::allowed() {
  return "none, bias, relu, leaky_relu, silu, gelu, bias+relu, bias+leaky_relu, bias+silu, bias+gelu";
}

bool Epilogue::parse(const std::string& s, Epilogue& out, std::string& why) {
  Epilogue e;
  std::string rest = s;
  if (rest.rfind("bias", 0) == 0) {
    e.bias = true;
    rest = rest.substr(4);
    if (rest.empty()) {
      out = e;
      return true;
    }
    if (rest[0] != '+') {
      why = "unknown epilogue '" + s + "' (allowed: " + allowed() + ")";
      return false;
    }
    rest = rest.substr(1);
  }
  for (Activation a : {Activation::none, Activation::relu, Activation::leaky_relu, Activation::silu,
                       Activation::gelu}) {
    if (rest == activation_name(a) && !(e.bias && a == Activation::none)) {
      e.act = a;
      out = e;
      return true;
    }
  }
  why = "unknown epilogue '" + s + "' (allowed: " + allowed() + ")";
  return false;
}

}  // namespace tilekit
