//===- Model.cpp - a model's interface: tensors, variables, random state --===//
//
// The helpers of Model.h. Building a model from a tensor graph runs the
// scheduler and lives in the pipeline (Pipeline/BuildModel.cpp).
//
//===----------------------------------------------------------------------===//
#include "Codegen/Model/Model.h"

#include <cctype>
#include <charconv>
#include <map>

namespace tgc {

const ModelTensor *Model::find(std::string_view n) const {
  for (const ModelTensor &t : tensors)
    if (t.name == n) return &t;
  return nullptr;
}

Result<std::vector<int64_t>> Model::varValues(const std::map<std::string, int64_t> &given) const {
  std::map<std::string, int64_t> values;
  for (const ModelVar &v : vars)
    if (v.bound) values[v.name] = *v.bound;
  for (const auto &[name, value] : given) values[name] = value;
  for (const ModelVar &v : vars)
    if (!values.count(v.name))
      return Diagnostic(Location(), "variable '" + v.name + "' has no value: give one with --var " + v.name + "=N (" +
                                        std::to_string(v.min) + ".." + std::to_string(v.max) + ")");
  return plan.bindVars(values);
}

Result<std::vector<int64_t>> Model::varValuesFor(const SchedulePlan &other, const std::map<std::string, int64_t> &given) const {
  Result<std::vector<int64_t>> values = varValues(given);
  if (!values) return values.error();
  std::vector<int64_t> out;
  for (const ScheduleVar &v : other.vars) {
    int j = plan.indexOfVar(v.name);
    if (j < 0) return Diagnostic(Location(), "the schedule's variable '" + v.name + "' is not the model's");
    out.push_back((*values)[size_t(j)]);
  }
  return out;
}

Result<std::pair<std::string, int64_t>> parseVarAssignment(std::string_view text) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Diagnostic(Location(), "--var expects NAME=VALUE, got '" + std::string(text) + "'");
  std::string_view digits = text.substr(eq + 1);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return Diagnostic(Location(), "--var " + std::string(text.substr(0, eq)) + ": '" + std::string(digits) +
                                      "' is not an integer");
  return std::pair(std::string(text.substr(0, eq)), v);
}

int Model::randomTensor(ModelTensor::Random kind) const {
  int found = -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].random != kind) continue;
    if (found >= 0) return -1;
    found = int(i);
  }
  return found;
}

std::string cIdentifier(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty()) return "model";
  if (std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  return out;
}

} // namespace tgc
