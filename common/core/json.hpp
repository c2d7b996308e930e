#pragma once
// Reading numbers from JSON a user gave us (a shard manifest, a checkpoint
// index, a .gcl header, a machine profile, a results file).
//
// nlohmann's get<T>() converts a number with static_cast: 2.56e67 read as an
// int64 is undefined behaviour (found by the fuzzer in a shard manifest),
// 4294967297 read as an int is silently 1, and 1e300 read as a float is
// undefined again. json_get<T> accepts only what T holds exactly — an integer
// in T's range for an integral T, a number within T's range for a floating T,
// element by element for std::vector and std::array — and otherwise throws
// nlohmann's own type_error, which every reader already turns into one line
// naming its file.

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gcnlab {

namespace detail {
template <class T>
struct is_vector : std::false_type {};
template <class T, class A>
struct is_vector<std::vector<T, A>> : std::true_type {};
template <class T>
struct is_array : std::false_type {};
template <class T, std::size_t N>
struct is_array<std::array<T, N>> : std::true_type {};

[[noreturn]] inline void json_type_error(const nlohmann::json& v, const std::string& expected) {
  throw nlohmann::json::type_error::create(302, fmt::format("expected {}, got {}", expected, v.dump()), &v);
}
}  // namespace detail

template <class T>
T json_get(const nlohmann::json& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    if (v.is_number_unsigned()) {
      const auto u = v.get<std::uint64_t>();
      if (std::in_range<T>(u)) return static_cast<T>(u);
    } else if (v.is_number_integer()) {
      const auto s = v.get<std::int64_t>();
      if (std::in_range<T>(s)) return static_cast<T>(s);
    }
    detail::json_type_error(
        v, fmt::format("an integer in [{}, {}]", std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else if constexpr (std::is_floating_point_v<T>) {
    // JSON has no inf or NaN, so a number read as double is finite.
    if (v.is_number()) {
      const double d = v.get<double>();
      if (std::fabs(d) <= static_cast<double>(std::numeric_limits<T>::max())) return static_cast<T>(d);
    }
    detail::json_type_error(v, fmt::format("a number of magnitude at most {}", std::numeric_limits<T>::max()));
  } else if constexpr (detail::is_vector<T>::value) {
    if (!v.is_array()) detail::json_type_error(v, "an array");
    T out;
    out.reserve(v.size());
    for (const auto& e : v) out.push_back(json_get<typename T::value_type>(e));
    return out;
  } else if constexpr (detail::is_array<T>::value) {
    T out{};
    if (!v.is_array() || v.size() != out.size()) detail::json_type_error(v, fmt::format("an array of {}", out.size()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = json_get<typename T::value_type>(v[i]);
    return out;
  } else {
    return v.get<T>();  // strings, objects: nlohmann checks the type
  }
}

// json_get with the type taken from the destination: get_to(j.at("nodes"), m.nodes).
template <class T>
void get_to(const nlohmann::json& v, T& out) {
  out = json_get<T>(v);
}

}  // namespace gcnlab
