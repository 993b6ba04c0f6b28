#include "nccl_names.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <string>

namespace syncopate::analyzer::import {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

std::string lower(std::string_view s) {
  std::string r(s);
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

trace::CollType collTypeFromKernelToken(std::string_view t) {
  using trace::CollType;
  if (t == "AllReduce") return CollType::AllReduce;
  if (t == "AllGather") return CollType::AllGather;
  if (t == "ReduceScatter") return CollType::ReduceScatter;
  if (t == "Broadcast") return CollType::Broadcast;
  if (t == "Reduce") return CollType::Reduce;
  if (t == "AllToAll" || t == "AlltoAll") return CollType::AllToAll;
  return CollType::Unknown;
}

trace::DataType dtypeFromKernelToken(std::string_view t) {
  using trace::DataType;
  static constexpr std::array<std::pair<std::string_view, DataType>, 22> kNames{{
      {"int8_t", DataType::Int8},     {"i8", DataType::Int8},       {"uint8_t", DataType::Uint8},
      {"u8", DataType::Uint8},        {"int32_t", DataType::Int32}, {"i32", DataType::Int32},
      {"uint32_t", DataType::Uint32}, {"u32", DataType::Uint32},    {"int64_t", DataType::Int64},
      {"i64", DataType::Int64},       {"uint64_t", DataType::Uint64}, {"u64", DataType::Uint64},
      {"half", DataType::Float16},    {"f16", DataType::Float16},   {"float", DataType::Float32},
      {"f32", DataType::Float32},     {"double", DataType::Float64}, {"f64", DataType::Float64},
      {"__nv_bfloat16", DataType::Bfloat16}, {"bf16", DataType::Bfloat16},
      {"__nv_fp8_e4m3", DataType::Float8e4m3}, {"__nv_fp8_e5m2", DataType::Float8e5m2},
  }};
  for (const auto& [name, type] : kNames)
    if (t == name) return type;
  return DataType::Unknown;
}

trace::RedOp redOpFromKernelToken(std::string_view t) {
  using trace::RedOp;
  if (t == "Sum") return RedOp::Sum;
  if (t == "Prod") return RedOp::Prod;
  if (t == "Max") return RedOp::Max;
  if (t == "Min") return RedOp::Min;
  if (t == "Avg" || t == "PreMulSum" || t == "SumPostDiv") return RedOp::Avg;
  return RedOp::Unknown;
}

}  // namespace

NcclKernelInfo parseNcclKernelName(std::string_view name) {
  NcclKernelInfo info;
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    const auto at = name.find(prefix);
    if (at != 0) continue;
    info.is_nccl = true;
    std::string_view rest = name.substr(prefix.size());
    rest = rest.substr(0, rest.find('('));
    // Tokens separated by '_': the operation first, then algorithm/protocol/op/type in an
    // order that changed across NCCL versions, so each token is recognised on its own.
    std::size_t pos = 0;
    bool first = true;
    while (pos <= rest.size()) {
      std::size_t next = rest.find('_', pos);
      if (next == std::string_view::npos) next = rest.size();
      const std::string_view tok = rest.substr(pos, next - pos);
      if (first) {
        info.is_send_recv = tok == "SendRecv";
        info.type = collTypeFromKernelToken(tok);
        first = false;
      } else if (auto d = dtypeFromKernelToken(tok); d != trace::DataType::Unknown) {
        info.dtype = d;
      } else if (auto r = redOpFromKernelToken(tok); r != trace::RedOp::Unknown) {
        info.red_op = r;
      }
      pos = next + 1;
    }
    if (info.dtype == trace::DataType::Unknown) {  // type names that contain '_' themselves
      for (std::string_view t : {"__nv_bfloat16", "__nv_fp8_e4m3", "__nv_fp8_e5m2"})
        if (rest.find(t) != std::string_view::npos) info.dtype = dtypeFromKernelToken(t);
    }
    return info;
  }
  if (name.starts_with("nccl")) info.is_nccl = true;
  return info;
}

trace::CollType collTypeFromPytorchName(std::string_view name) {
  using trace::CollType;
  const std::string n = lower(name);
  auto has = [&](std::string_view s) { return n.find(s) != std::string::npos; };
  if (has("allreduce") || has("all_reduce")) return CollType::AllReduce;
  if (has("reduce_scatter") || has("reducescatter")) return CollType::ReduceScatter;
  if (has("allgather") || has("all_gather")) return CollType::AllGather;
  if (has("alltoall") || has("all_to_all")) return CollType::AllToAll;
  if (has("gather")) return CollType::Gather;
  if (has("scatter")) return CollType::Scatter;
  if (has("broadcast")) return CollType::Broadcast;
  if (has("barrier")) return CollType::Barrier;
  if (has("reduce")) return CollType::Reduce;
  if (has("send")) return CollType::Send;
  if (has("recv")) return CollType::Recv;
  return CollType::Unknown;
}

trace::DataType dataTypeFromPytorchName(std::string_view name) {
  using trace::DataType;
  static constexpr std::array<std::pair<std::string_view, DataType>, 16> kNames{{
      {"Float", DataType::Float32}, {"float", DataType::Float32}, {"Half", DataType::Float16},
      {"BFloat16", DataType::Bfloat16}, {"Double", DataType::Float64}, {"Int", DataType::Int32},
      {"Long", DataType::Int64}, {"Byte", DataType::Uint8}, {"Char", DataType::Int8},
      {"Bool", DataType::Uint8}, {"Short", DataType::Unknown}, {"Float8_e4m3fn", DataType::Float8e4m3},
      {"Float8_e5m2", DataType::Float8e5m2}, {"UInt32", DataType::Uint32}, {"UInt64", DataType::Uint64},
      {"Int8", DataType::Int8},
  }};
  for (const auto& [n, type] : kNames)
    if (iequals(name, n)) return type;
  return DataType::Unknown;
}

std::vector<std::int32_t> parseRankList(std::string_view text) {
  std::vector<std::int32_t> out;
  std::size_t i = 0;
  while (i < text.size() && (text[i] == ' ' || text[i] == '[')) ++i;
  while (i < text.size()) {
    std::int32_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
    if (ec != std::errc{}) break;
    out.push_back(v);
    i = static_cast<std::size_t>(ptr - text.data());
    while (i < text.size() && (text[i] == ',' || text[i] == ' ')) ++i;
    if (i < text.size() && text[i] == ']') return out;
  }
  return out.empty() || text.find(']') == std::string_view::npos ? std::vector<std::int32_t>{} : out;
}

}  // namespace syncopate::analyzer::import
