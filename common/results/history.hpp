#pragma once
// A run's whole history across its segments (issue 47). A run that a
// scheduler stops, kills or requeues runs in segments: the first start, then
// each resume from a checkpoint, possibly under another strategy or rank
// count. Every checkpoint carries the history so far (history.json), so the
// results of the last segment list every epoch once, each marked with the
// segment it ran in:
//
//   segments  [{segment 0, started_utc, algo 1d, ranks 4, first_epoch 0}, {segment 1, ..., first_epoch 21}]
//   epochs    [{epoch 0, segment 0, loss, accuracies, time_s, wire_bytes}, ..., {epoch 29, segment 1, ...}]
//
// Epochs a killed segment ran after its last checkpoint are not in it: the
// resume ran them again, and the history holds the epochs that led to the
// final weights.

#include <vector>

#include <nlohmann/json.hpp>

#include "common/model/trainer.hpp"

namespace gcnlab {

struct RunHistory {
  nlohmann::json segments = nlohmann::json::array();  // one object per segment, in order
  std::vector<EpochMetrics> epochs;                   // times and bytes: max over ranks

  int segment() const { return static_cast<int>(segments.size()) - 1; }  // the current one
  // Starts a segment at `first_epoch` described by `how` (algo, grid, ranks, ...);
  // epochs at or past first_epoch (a resume from an older checkpoint) are dropped.
  void begin(int first_epoch, nlohmann::json how);
  void add(EpochMetrics e);
};

// The epoch record of the results and the history: loss, accuracies, times,
// the segment and the wire bytes per communication category.
nlohmann::json epoch_json(const EpochMetrics& e);
EpochMetrics epoch_from_json(const nlohmann::json& j);

nlohmann::json history_json(const RunHistory& h);
// Throws nlohmann's exceptions on a malformed document (the caller names the file).
RunHistory history_from_json(const nlohmann::json& j);

}  // namespace gcnlab
