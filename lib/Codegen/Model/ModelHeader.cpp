//===- ModelHeader.cpp - the C header of a compiled model -----------------===//
//
// Declares what ModelCodegen.cpp defines, for C99 and C++ callers: the ABI
// block (Runtime/ModelABI.h, embedded at build time), compile-time constants
// per interface tensor and for the workspace, and the entry points. No LLVM:
// tools that only write headers need not link the code generator's backend.
//
//===----------------------------------------------------------------------===//
#include "Codegen/Model/ModelCodegen.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

namespace tgc {

namespace {
#include "ModelABIText.inc" // kModelABIText: the text of Runtime/ModelABI.h

const char *randomName(ModelTensor::Random r) {
  return r == ModelTensor::Random::Key ? ", the random key" : r == ModelTensor::Random::Counter ? ", the random counter" : "";
}

const char *roleName(ModelTensor::Role r) {
  switch (r) {
  case ModelTensor::Role::Input: return "input";
  case ModelTensor::Role::Output: return "output";
  case ModelTensor::Role::InOut: return "in-out";
  }
  return "?";
}

/// The C element type a tensor's pointer has.
std::string cElementType(DType dt) {
  std::string_view n = dt.name();
  if (n == "bool") return "bool";
  if (n == "float32") return "float";
  if (n == "float64") return "double";
  if (n == "float16" || n == "bfloat16") return "uint16_t"; // raw bits: C99 has no half types
  if (dt.isInt()) return std::string(n) + "_t";             // int8 -> int8_t, uint64 -> uint64_t
  return "void";
}

std::string upper(std::string s) {
  for (char &c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string i64(int64_t v) { return "INT64_C(" + std::to_string(v) + ")"; }

/// The parameter names of NAME_run's variables: C identifiers of their names,
/// "var_" before one that a tensor's parameter or `workspace` already has.
std::vector<std::string> varParamNames(const Model &model, const std::vector<size_t> &exposed) {
  std::set<std::string> taken{"workspace"};
  for (size_t i : exposed) taken.insert(cIdentifier(model.tensors[i].name));
  std::vector<std::string> out;
  for (const ModelVar &v : model.vars) {
    std::string n = cIdentifier(v.name);
    out.push_back(taken.count(n) ? "var_" + n : n);
  }
  return out;
}

/// The variables' constants: NAME_VAR_<V>_INDEX, _NAME, _MIN, _MAX, _DEFAULT.
void varConstants(std::ostringstream &h, const Model &model, const std::string &NAME) {
  if (model.vars.empty()) return;
  h << "/* Variables (tinygrad Variables): " << model.name << "_run takes each as an argument after the tensors, in\n"
    << " * this order; buffers are sized for the maximum, a value outside [MIN, MAX] is refused with\n"
    << " * TGC_ERR_VAR_RANGE. _DEFAULT is the value the exported graph binds (" << model.name << "_run_tensors uses it). */\n";
  for (size_t j = 0; j < model.vars.size(); ++j) {
    const ModelVar &v = model.vars[j];
    std::string V = NAME + "_VAR_" + upper(cIdentifier(v.name));
    h << "/* " << v.name << ": " << v.cType << " in [" << v.min << ", " << v.max << "]";
    if (v.bound) h << ", default " << *v.bound;
    h << " */\n";
    h << "#define " << V << "_INDEX " << j << "\n";
    h << "#define " << V << "_NAME \"" << v.name << "\"\n";
    h << "#define " << V << "_MIN " << i64(v.min) << "\n";
    h << "#define " << V << "_MAX " << i64(v.max) << "\n";
    if (v.bound) h << "#define " << V << "_DEFAULT " << i64(*v.bound) << "\n";
  }
  h << "\n";
}

} // namespace

int modelDTypeCode(DType dt) {
  static const char *const names[] = {"bool",   "int8",    "uint8",    "int16",   "uint16",  "int32", "uint32",
                                      "int64",  "uint64",  "float16",  "bfloat16", "float32", "float64"};
  for (size_t i = 0; i < std::size(names); ++i)
    if (dt && dt.name() == names[i]) return int(i) + 1;
  return 0;
}

std::set<size_t> ModelWeights::placed() const {
  std::set<size_t> out(external.begin(), external.end());
  for (const auto &[i, bytes] : embedded) out.insert(i);
  return out;
}

std::vector<size_t> exposedTensors(const Model &model, const std::set<size_t> &placed) {
  std::vector<size_t> out;
  for (size_t i = 0; i < model.tensors.size(); ++i)
    if (!placed.count(i)) out.push_back(i);
  return out;
}

int exposedRandomTensor(const Model &model, const std::vector<size_t> &exposed, ModelTensor::Random kind) {
  int t = model.randomTensor(kind);
  auto it = std::find(exposed.begin(), exposed.end(), size_t(t));
  return t < 0 || it == exposed.end() ? -1 : int(it - exposed.begin());
}

namespace {

/// tinygrad's kernel name for a body without optimizer decisions: `r_` when it
/// reduces, else `E_`, then every RANGE's size, loops before reduces, each in
/// axis order (pipeline-codegen.md, "Kernel names"); "" without ranges.
std::string rangeName(const UOp *sink) {
  struct Axis {
    bool reduce;
    int64_t id;
    size_t order;
    std::string size;
  };
  std::vector<Axis> axes;
  bool reduces = false;
  for (const UOp *u : toposort(sink)) {
    reduces = reduces || u->is(Op::REDUCE);
    if (!u->is(Op::RANGE) || !u->numSrc()) continue;
    const Value &a = u->arg();
    bool reduce = a.isSequence() && a.size() && a[a.size() - 1].str() == "REDUCE";
    int64_t id = a.isSequence() && a.size() && a[0].isInt() ? a[0].getInt() : 0;
    const UOp *bound = u->src(0);
    std::string size = bound->is(Op::CONST) && bound->arg().isInt() ? std::to_string(bound->arg().getInt()) : "n";
    axes.push_back({reduce, id, axes.size(), size});
  }
  if (axes.empty()) return "";
  std::sort(axes.begin(), axes.end(), [](const Axis &x, const Axis &y) {
    return std::tie(x.reduce, x.id, x.order) < std::tie(y.reduce, y.id, y.order);
  });
  std::string name = reduces ? "r" : "E";
  for (const Axis &x : axes) name += "_" + x.size;
  return name;
}

} // namespace

std::vector<std::string> modelKernelNames(const SchedulePlan &plan) {
  std::vector<std::string> names;
  std::map<std::string, int> seen;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    std::string n = plan.kernels[k].name;
    // "test" is the placeholder tinygrad's (and tgc's) kernel split gives every
    // kernel before codegen names it.
    if (n.empty() || n == "test") n = plan.kernels[k].sink ? rangeName(plan.kernels[k].sink) : "";
    if (n.empty()) n = "kernel" + std::to_string(k);
    // Repeated names get tinygrad's n1, n2, ... suffixes.
    int &count = seen[n];
    names.push_back(count ? n + "n" + std::to_string(count) : n);
    ++count;
  }
  return names;
}

std::string modelHeader(const Model &model, const MemoryPlan &memory, const ModelWeights &weights) {
  std::vector<size_t> exposed = exposedTensors(model, weights.placed());
  const std::string &name = model.name;
  std::string NAME = upper(name);
  std::ostringstream h;
  h << "/* " << name << ".h - generated by `tgc compile`: the C interface of model '" << name << "'.\n"
    << " * Call " << name << "_run() with caller-owned tensors (dense, C order) and a workspace of\n"
    << " * " << NAME << "_WORKSPACE_BYTES bytes aligned to " << NAME
    << "_WORKSPACE_ALIGN (or NULL: the entry allocates and frees it).\n"
    << " * Returns TGC_OK (0) or a TGC_ERR_* code; it never aborts. */\n"
    << "#ifndef TGC_MODEL_" << NAME << "_H\n#define TGC_MODEL_" << NAME << "_H\n\n"
    << "#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n\n"
    << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
    << kModelABIText << "\n";
  if (!weights.embedded.empty()) {
    h << "/* Embedded in the object (read-only data, not arguments):";
    for (const auto &[i, bytes] : weights.embedded) h << " " << model.tensors[i].name;
    h << " */\n";
  }
  if (!weights.external.empty()) {
    h << "/* External weights (the weights file, bound with " << name << "_bind_weights; not arguments):";
    for (size_t i : weights.external) h << " " << model.tensors[i].name;
    h << " */\n";
    h << "#define " << NAME << "_NUM_WEIGHTS " << weights.external.size() << "\n";
    h << "#define " << NAME << "_WEIGHTS_ID UINT64_C(0x" << std::hex << weights.externalId << std::dec << ")\n";
  }
  h << "#define " << NAME << "_NUM_KERNELS " << model.plan.kernels.size() << "\n";
  h << "#define " << NAME << "_NUM_TENSORS " << exposed.size() << "\n";
  h << "#define " << NAME << "_NUM_VARS " << model.vars.size() << "\n";
  h << "#define " << NAME << "_WORKSPACE_BYTES " << i64(memory.workspaceBytes) << "\n";
  h << "#define " << NAME << "_WORKSPACE_ALIGN " << MemoryPlan::kAlignment << "\n";
  int key = exposedRandomTensor(model, exposed, ModelTensor::Random::Key);
  int counter = exposedRandomTensor(model, exposed, ModelTensor::Random::Counter);
  if (key >= 0 || counter >= 0)
    h << "/* The random state (see TGC_RANDOM_KEY0): the key and the counter each run advances. */\n"
      << "#define " << NAME << "_RANDOM_KEY_INDEX " << key << "\n#define " << NAME << "_RANDOM_COUNTER_INDEX "
      << counter << "\n";
  h << "\n";
  for (size_t i = 0; i < exposed.size(); ++i) {
    const ModelTensor &t = model.tensors[exposed[i]];
    std::string T = NAME + "_" + upper(cIdentifier(t.name));
    std::string shape;
    int64_t numel = 1;
    for (int64_t d : t.shape) {
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      numel *= d;
    }
    h << "/* " << t.name << ": " << roleName(t.role) << ", " << t.dtype.name() << "[" << shape << "]"
      << randomName(t.random) << " */\n";
    h << "#define " << T << "_INDEX " << i << "\n";
    h << "#define " << T << "_NAME \"" << t.name << "\"\n";
    h << "#define " << T << "_ROLE TGC_ROLE_" << (t.role == ModelTensor::Role::Input    ? "INPUT"
                                                  : t.role == ModelTensor::Role::Output ? "OUTPUT"
                                                                                        : "INOUT")
      << "\n";
    h << "#define " << T << "_DTYPE TGC_DTYPE_" << upper(std::string(t.dtype.name())) << "\n";
    h << "#define " << T << "_RANK " << t.shape.size() << "\n";
    for (size_t d = 0; d < t.shape.size(); ++d) h << "#define " << T << "_DIM" << d << " " << i64(t.shape[d]) << "\n";
    if (!t.shape.empty()) h << "#define " << T << "_SHAPE { " << shape << " }\n";
    h << "#define " << T << "_NUMEL " << i64(numel) << "\n";
    h << "#define " << T << "_BYTES " << i64(t.bytes) << "\n";
    h << "#define " << T << "_ALIGN " << t.dtype.itemsize() << "\n\n";
  }
  varConstants(h, model, NAME);
  h << "/* Runs the model once. Arguments in tensor order (" << NAME << "_*_INDEX), "
    << (model.vars.empty() ? "" : "then the variables (" + NAME + "_VAR_*_INDEX), ") << "then the workspace. */\n";
  h << "int " << name << "_run(";
  for (size_t i : exposed) {
    const ModelTensor &t = model.tensors[i];
    h << (t.role == ModelTensor::Role::Input ? "const " : "") << cElementType(t.dtype) << " *" << cIdentifier(t.name)
      << ", ";
  }
  std::vector<std::string> varNames = varParamNames(model, exposed);
  for (size_t j = 0; j < model.vars.size(); ++j) h << model.vars[j].cType << " " << varNames[j] << ", ";
  h << "void *workspace);\n";
  h << "/* The same with tensors[i] = the data of tensor i (for generic drivers)"
    << (model.vars.empty() ? "" : ", the variables at their defaults") << ". */\n";
  h << "int " << name << "_run_tensors(void *const *tensors, void *workspace);\n";
  h << "/* The same with vars[j] = the value of variable j (NULL: each its default, TGC_ERR_NO_VARS if one has none). */\n";
  h << "int " << name << "_run_vars(void *const *tensors, const int64_t *vars, void *workspace);\n";
  h << "/* Profiling: fn(ctx, call, kernel, end) around every call of later runs; NULL turns it off. */\n";
  h << "void " << name << "_set_observer(tgc_call_observer fn, void *ctx);\n";
  if (!weights.external.empty()) {
    h << "/* Binds the weights file's contents (e.g. tgc_weights_data of tgc_weights_open; link tgc::runtime):\n"
      << " * checks it (checksum, this model's identity and table) and uses it from the next run on. The blob\n"
      << " * must stay valid while the model runs. TGC_OK or a TGC_ERR_* code; runs before it return\n"
      << " * TGC_ERR_NO_WEIGHTS. */\n";
    h << "int " << name << "_bind_weights(const void *blob, size_t size);\n";
  }
  h << "\n";
  h << "/* The metadata table (runtime-queryable) and the model descriptor. */\n";
  h << "extern const tgc_tensor_info " << name << "_tensors[];\n";
  h << "extern const tgc_var_info " << name << "_vars[];\n";
  h << "extern const tgc_model_info " << name << "_model;\n\n";
  h << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* TGC_MODEL_" << NAME << "_H */\n";
  return h.str();
}

} // namespace tgc
