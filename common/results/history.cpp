#include "common/results/history.hpp"

#include <algorithm>
#include <string>

#include "common/core/json.hpp"

namespace gcnlab {

using nlohmann::json;

void RunHistory::begin(int first_epoch, json how) {
  std::erase_if(epochs, [&](const EpochMetrics& e) { return e.epoch >= first_epoch; });
  how["segment"] = segments.size();
  how["first_epoch"] = first_epoch;
  segments.push_back(std::move(how));
}

void RunHistory::add(EpochMetrics e) {
  e.segment = segment();
  epochs.push_back(e);
}

json epoch_json(const EpochMetrics& e) {
  json wire = json::object();
  for (int c = 0; c < kNumCategories; ++c)
    if (is_communication(static_cast<Category>(c))) wire[std::string(to_string(static_cast<Category>(c)))] = e.wire_bytes[c];
  return {{"epoch", e.epoch},       {"loss", e.loss},         {"train_acc", e.train_acc},
          {"val_acc", e.val_acc},   {"test_acc", e.test_acc}, {"time_s", e.time_s},
          {"eval_time_s", e.eval_time_s}, {"segment", e.segment}, {"wire_bytes", wire}};
}

EpochMetrics epoch_from_json(const json& j) {
  EpochMetrics e;
  e.epoch = json_get<int>(j.at("epoch"));
  e.loss = json_get<double>(j.at("loss"));
  e.train_acc = json_get<double>(j.at("train_acc"));
  e.val_acc = json_get<double>(j.at("val_acc"));
  e.test_acc = json_get<double>(j.at("test_acc"));
  e.time_s = json_get<double>(j.at("time_s"));
  e.eval_time_s = json_get<double>(j.at("eval_time_s"));
  e.segment = json_get<int>(j.at("segment"));
  for (const auto& [name, bytes] : j.at("wire_bytes").items()) {
    const auto c = category_from_string(name);
    if (c) e.wire_bytes[static_cast<int>(*c)] = json_get<double>(bytes);
  }
  return e;
}

json history_json(const RunHistory& h) {
  json epochs = json::array();
  for (const EpochMetrics& e : h.epochs) epochs.push_back(epoch_json(e));
  return {{"segments", h.segments}, {"epochs", epochs}};
}

RunHistory history_from_json(const json& j) {
  RunHistory h;
  h.segments = j.at("segments");
  if (!h.segments.is_array()) throw json::type_error::create(302, "segments is not an array", &j);
  for (const json& e : j.at("epochs")) h.epochs.push_back(epoch_from_json(e));
  return h;
}

}  // namespace gcnlab
