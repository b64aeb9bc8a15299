// The matrix unit's conv (docs/isa.md): dense weights packed per address, the register-tiled
// kernels, and the loop-by-loop reference for convs whose accumulators overlap an operand.
#include "sim/core/datapath.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <type_traits>
#include <variant>

#include "sim/core/costs.hpp"
#include "sim/core/kernels.hpp"
#include "support/int_ops.hpp"

namespace tessel::sim {

namespace {

/// The bytes [begin, end) of scratchpad `sp` that an operand's box lies within.
struct ByteRange {
  std::uint32_t sp = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;

  bool overlaps(const ByteRange& other) const {
    return sp == other.sp && begin < other.end && other.begin < end;
  }
};

}  // namespace

void pack_dense_weights(const isa::Conv& x, int matrix_rows, int matrix_cols, int weight_bytes,
                        const std::uint8_t* weights, DenseWeights& out) {
  const auto wb = static_cast<std::uint64_t>(weight_bytes);
  const std::int64_t rows = matrix_rows, cols = matrix_cols;
  const std::int64_t in_channels = std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t in_pairs = kernels::channel_pairs(in_channels);
  const std::int64_t block = kernels::dense_block(out_channels);
  kernels::PairWeights& packed = out.packed;
  const std::int64_t taps = std::int64_t{x.kh} * x.kw;
  const auto at = [&](std::int64_t tap, std::int64_t i, std::int64_t o) {
    return packed.data() + kernels::dense_index(tap, i, o, taps, in_pairs, out_channels, block);
  };
  // No zero fill (kernels::PairWeights): every element is written below, each input channel
  // once per tap and output, and with an odd channel count the last pair's filler.
  packed.resize(static_cast<std::size_t>(taps * 2 * in_pairs * out_channels));
  out.block = block;
  if (in_channels % 2 != 0)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t o = 0; o < out_channels; ++o) *at(tap, in_channels, o) = 0;
  // The raw layout is [ocb][icb][ky][kx][r][c]: rows r and r + 1 (input channels 2k and
  // 2k + 1 when `rows` is even) are adjacent and interleave into one pair row.
  const std::int64_t row_elements = cols;
  const auto element = [&](const std::uint8_t* row, std::int64_t c) -> std::int16_t {
    return wb == 2 ? static_cast<std::int16_t>(read_element(row + 2 * c, 2))
                   : static_cast<std::int16_t>(static_cast<std::int8_t>(row[c]));
  };
  // Raw row (ocb, icb, tap, r): its `cols` elements.
  const auto raw_row = [&](std::int64_t ocb, std::int64_t icb, std::int64_t tap, std::int64_t r) {
    return weights +
           static_cast<std::uint64_t>(((ocb * x.ic_blocks + icb) * taps + tap) * rows + r) *
               static_cast<std::uint64_t>(row_elements) * wb;
  };
  // Raw rows in their own order within a column block (output block, input block, tap, row):
  // each read front to back, each written pair row a whole run of the packed layout (a
  // 64-byte line for blocks of 16). A raw row's channels [c0, c1) are the ones in the block.
  for (std::int64_t first = 0; first < out_channels; first += block) {
    const std::int64_t last = std::min(out_channels, first + block);
    for (std::int64_t ocb = first / cols; ocb * cols < last; ++ocb) {
      const std::int64_t c0 = std::max<std::int64_t>(0, first - ocb * cols);
      const std::int64_t c1 = std::min(cols, last - ocb * cols);
      for (std::int64_t icb = 0; icb < x.ic_blocks; ++icb)
        for (std::int64_t tap = 0; tap < taps; ++tap) {
          std::int64_t r = 0;
          for (; rows % 2 == 0 && r < rows; r += 2) {
            std::int16_t* __restrict dst = at(tap, icb * rows + r, ocb * cols + c0);
            const std::uint8_t* first_row = raw_row(ocb, icb, tap, r);
            const std::uint8_t* second_row =
                first_row + static_cast<std::uint64_t>(row_elements) * wb;
            for (std::int64_t c = c0; c < c1; ++c) {
              dst[2 * (c - c0)] = element(first_row, c);
              dst[2 * (c - c0) + 1] = element(second_row, c);
            }
          }
          for (; r < rows; ++r) {
            std::int16_t* dst = at(tap, icb * rows + r, ocb * cols + c0);
            const std::uint8_t* src = raw_row(ocb, icb, tap, r);
            for (std::int64_t c = c0; c < c1; ++c) dst[2 * (c - c0)] = element(src, c);
          }
        }
    }
  }
  out.pair_channels = kernels::drop_zero_pairs(packed, taps, in_pairs, out_channels, block);
}

const Datapath::PackedWeights& Datapath::dense_weights(const isa::Conv& x, std::int64_t in_channels,
                                                       std::int64_t out_channels,
                                                       const std::uint8_t* weights,
                                                       std::size_t raw_bytes, bool amx) {
  // The packing this use needs, made on the entry's first use of that kind.
  const auto packing = [&](PackedWeights& entry) -> const PackedWeights& {
    if (amx && entry.amx.tiles.empty()) {
      ++weight_packings_;
      const kernels::amx::RawWeightLayout layout{
          x.oc_blocks,  x.ic_blocks,  std::int64_t{x.kh} * x.kw,
          matrix_rows_, matrix_cols_, weight_bytes_};
      kernels::amx::pack_weights_raw(weights, layout, entry.amx);
    } else if (!amx && entry.dense.packed.empty()) {
      ++weight_packings_;
      pack_dense_weights(x, matrix_rows_, matrix_cols_, weight_bytes_, weights, entry.dense);
    }
    return entry;
  };
  const std::array<std::int64_t, 5> key = {std::int64_t{x.kh} * x.kw, in_channels, out_channels,
                                           matrix_rows_, weight_bytes_};
  ++weight_uses_;
  // A copy of DRAM bytes no store wrote (the weights, loaded for this use) takes the entry
  // packed from any copy of the same DRAM bytes, at any scratchpad address: they are equal.
  const std::optional<std::uint64_t> source =
      copies_.source(x.w_sp, x.w_addr, x.w_addr + raw_bytes);
  PackedWeights* entry = nullptr;
  for (auto& candidate : weight_cache_) {
    if (candidate.key != key || candidate.raw_bytes != raw_bytes) continue;
    if (source && candidate.source == source) {
      entry = &candidate;
      break;
    }
    if (candidate.sp == x.w_sp && candidate.addr == x.w_addr) entry = &candidate;
  }
  // Else valid while no page of the weights was written since the entry was made; after a
  // write, still valid when the bytes are the ones packed (kept only for bytes with no source).
  if (entry && ((source && entry->source == source) ||
                !written_since(x.w_sp, x.w_addr, x.w_addr + raw_bytes, entry->generation) ||
                (!entry->source && std::memcmp(entry->raw.data(), weights, raw_bytes) == 0))) {
    entry->sp = x.w_sp;
    entry->addr = x.w_addr;
    entry->generation = write_generation_;
    entry->last_use = weight_uses_;
    return packing(*entry);
  }
  if (!entry) {
    if (weight_cache_.size() < kWeightCacheEntries) {
      entry = &weight_cache_.emplace_back();
    } else {
      entry = &*std::min_element(
          weight_cache_.begin(), weight_cache_.end(),
          [](const PackedWeights& a, const PackedWeights& b) { return a.last_use < b.last_use; });
    }
  }
  entry->sp = x.w_sp;
  entry->addr = x.w_addr;
  entry->key = key;
  entry->raw_bytes = raw_bytes;
  entry->source = source;
  if (!source) entry->raw.assign(weights, weights + raw_bytes);
  entry->generation = write_generation_;
  entry->dense.packed.clear();  // stale; repacked (in their allocations) on the next use
  entry->amx.tiles.clear();
  entry->last_use = weight_uses_;
  return packing(*entry);
}

void Datapath::execute_conv(const isa::Conv& x, const DenseWeights* prepacked) {
  const std::uint64_t ib = element_bytes(x.elem);
  const std::uint64_t wb = static_cast<std::uint64_t>(weight_bytes_);
  const std::int64_t rows = matrix_rows_, cols = matrix_cols_;
  const std::int64_t in_channels =
      x.depthwise ? std::int64_t{x.oc_blocks} * cols : std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t taps = std::int64_t{x.kh} * x.kw;
  const std::int64_t in_h = (std::int64_t{x.out_h} - 1) * x.stride_h +
                            (std::int64_t{x.kh} - 1) * x.dil_h + 1 - x.pad_top - x.pad_bottom;
  const std::int64_t in_w = (std::int64_t{x.out_w} - 1) * x.stride_w +
                            (std::int64_t{x.kw} - 1) * x.dil_w + 1 - x.pad_left - x.pad_right;
  const std::int64_t weight_count = taps * out_channels * (x.depthwise ? 1 : in_channels);
  const int u = static_cast<int>(x.in_shift);  // the input shift: every input element read

  // The fast loop reads each output pixel's inputs (and all weights, up front) before it writes
  // the pixel's accumulators, where docs/isa.md interleaves reads and writes per output
  // channel. The two agree unless the accumulators overlap an operand, which no sensible
  // program does; such a conv, and element widths the int16 kernels do not cover, take the
  // reference loop.
  const auto to_u64 = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  const ByteRange acc_bytes{
      x.acc_sp, x.acc_addr,
      x.acc_addr + (to_u64(x.out_h - 1) * x.acc_stride_y + to_u64(x.out_w - 1) * x.acc_stride_x +
                    to_u64(out_channels)) *
                       4};
  const ByteRange in_bytes{x.in_sp, x.in_addr,
                           x.in_addr + (to_u64(in_h - 1) * x.in_stride_y +
                                        to_u64(in_w - 1) * x.in_stride_x + to_u64(in_channels)) *
                                           ib};
  const ByteRange weight_bytes{x.w_sp, x.w_addr, x.w_addr + to_u64(weight_count) * wb};
  const ByteRange bias_bytes{
      x.w_sp, x.bias_addr,
      x.bias_addr + (x.init == isa::Init::kBias ? to_u64(out_channels) * 4 : 0)};
  const bool reference = reference_kernels_ || ib > 2 || wb > 2 || acc_bytes.overlaps(in_bytes) ||
                         acc_bytes.overlaps(weight_bytes) || acc_bytes.overlaps(bias_bytes);
  // The weights' deferred loads (settle_before), unless the dense loop below reads the
  // packing made ahead instead of these bytes.
  if (reference || x.depthwise || prepacked == nullptr || kernels::amx::available())
    settle(weight_bytes.sp, weight_bytes.begin, weight_bytes.end);
  if (reference) {
    execute_conv_reference(x);
    return;
  }

  const std::uint8_t* weights = scratchpads_[x.w_sp].data() + x.w_addr;
  const std::uint8_t* in = scratchpads_[x.in_sp].data() + x.in_addr;
  const std::uint8_t* bias = scratchpads_[x.w_sp].data() + x.bias_addr;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;
  // Adds the initial value (0, the bias or the accumulator's own) to output pixel (oy, ox)'s
  // sums and writes the accumulators.
  const auto write_pixel = [&](std::int64_t oy, std::int64_t ox, const std::uint32_t* sums) {
    std::uint8_t* slot = acc + to_u64(oy * x.acc_stride_y + ox * x.acc_stride_x) * 4;
    const std::uint8_t* start = x.init == isa::Init::kBias  ? bias
                                : x.init == isa::Init::kAcc ? slot
                                                            : nullptr;
    kernels::store_accumulators(sums, start, out_channels, slot);
  };

  if (!x.depthwise) {
    // Every output pixel's taps x channel pairs reduced in registers by kernels::conv_dense,
    // reading int16 pixels: the scratchpad itself when it holds them unpadded, else a
    // zero-padded int16 copy of the input box.
    const std::int64_t in_pairs = kernels::channel_pairs(in_channels);
    // The AMX kernel (amx_conv.hpp) where the CPU and OS allow it, over the cache entry's
    // tiles; else kernels::conv_dense over its dense_index layout.
    const bool use_amx = kernels::amx::available();
    const DenseWeights* dense = use_amx ? nullptr : prepacked;
    const kernels::amx::Weights* amx = nullptr;
    if (!dense) {
      const PackedWeights& cached =
          dense_weights(x, in_channels, out_channels, weights,
                        static_cast<std::size_t>(weight_count) * wb, use_amx);
      dense = &cached.dense;
      if (use_amx) amx = &cached.amx;
    }
    const std::int16_t* packed = dense->packed.data();
    const bool padded = x.pad_top || x.pad_bottom || x.pad_left || x.pad_right;
    // Weights on only some input channels, the same in every tap (conv1's 3 of 16): the copy
    // holds those channels alone (amx::Weights::channels; without AMX the channels of the
    // pairs kernels::drop_zero_pairs keeps, two a pair, which conv_dense then runs over).
    const std::vector<std::int32_t>* kept =
        amx ? (amx->channels.empty() ? nullptr : &amx->channels)
            : (dense->pair_channels.empty() ? nullptr : &dense->pair_channels);
    const std::int64_t pairs =
        !amx && kept ? static_cast<std::int64_t>(kept->size()) / 2 : in_pairs;
    const std::uint8_t* image = in;
    std::int64_t row_bytes = std::int64_t{x.in_stride_y} * 2;
    std::int64_t col_bytes = std::int64_t{x.in_stride_x} * 2;
    if (ib != 2 || in_channels % 2 != 0 || padded || kept || u > 0) {
      const std::int64_t padded_h = in_h + x.pad_top + x.pad_bottom;
      const std::int64_t padded_w = in_w + x.pad_left + x.pad_right;
      const std::int64_t pixel_stride =
          kept ? static_cast<std::int64_t>(kept->size()) : 2 * in_pairs;
      const std::int64_t padded_row = padded_w * pixel_stride;  // int16 elements
      // Only the padding is zeroed (the buffer keeps the last conv's bytes): the padding rows
      // and each row's left and right padding. With an odd channel count each pixel's
      // pair-filling last channel keeps stale bytes: its weights are 0 in every packing, and
      // any int16 x 0 adds 0. A row's pixels back to back on both sides (even channels,
      // in_stride_x = channels) widen in one call.
      image_.resize(static_cast<std::size_t>(padded_h * padded_row));
      std::int16_t* padded_image = image_.data();
      std::fill_n(padded_image, x.pad_top * padded_row, std::int16_t{0});
      std::fill_n(padded_image + (x.pad_top + in_h) * padded_row, x.pad_bottom * padded_row,
                  std::int16_t{0});
      const bool dense_rows = !kept && pixel_stride == in_channels && x.in_stride_x == in_channels;
      // The kept channels as runs of consecutive ones; those from `kept_present` on are an odd
      // count's missing pair-filling channel (drop_zero_pairs), copied as 0.
      kept_runs_.clear();
      std::int64_t kept_present = 0;
      for (; kept && kept_present < pixel_stride; ++kept_present) {
        const std::int64_t c = (*kept)[static_cast<std::size_t>(kept_present)];
        if (c >= in_channels) break;
        if (!kept_runs_.empty() && kept_runs_.back().channel + kept_runs_.back().count == c)
          ++kept_runs_.back().count;
        else
          kept_runs_.push_back({c, kept_present, 1});
      }
      for_split(in_h, in_h * in_w * in_channels, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t iy = begin; iy < end; ++iy) {
          std::int16_t* row = padded_image + (iy + x.pad_top) * padded_row;
          std::fill_n(row, x.pad_left * pixel_stride, std::int16_t{0});
          std::fill_n(row + (x.pad_left + in_w) * pixel_stride, x.pad_right * pixel_stride,
                      std::int16_t{0});
          const std::uint8_t* src = in + to_u64(iy * x.in_stride_y) * ib;
          std::int16_t* dst = row + x.pad_left * pixel_stride;
          if (dense_rows) {
            widen_elements(src, ib, in_w * in_channels, dst, u);
            continue;
          }
          if (kept) {
            for (std::int64_t ix = 0; ix < in_w; ++ix) {
              const std::uint8_t* pixel = src + to_u64(ix * x.in_stride_x) * ib;
              std::int16_t* out = dst + ix * pixel_stride;
              for (const KeptRun& run : kept_runs_)
                widen_elements(pixel + to_u64(run.channel) * ib, ib, run.count, out + run.at, u);
              for (std::int64_t j = kept_present; j < pixel_stride; ++j) out[j] = 0;
            }
            continue;
          }
          for (std::int64_t ix = 0; ix < in_w; ++ix) {
            widen_elements(src + to_u64(ix * x.in_stride_x) * ib, ib, in_channels,
                           dst + ix * pixel_stride, u);
          }
        }
      });
      image = reinterpret_cast<const std::uint8_t*>(padded_image);
      col_bytes = pixel_stride * 2;
      row_bytes = padded_w * col_bytes;
    }
    tap_offsets_.clear();
    for (std::int64_t ky = 0; ky < x.kh; ++ky)
      for (std::int64_t kx = 0; kx < x.kw; ++kx)
        tap_offsets_.push_back(ky * x.dil_h * row_bytes + kx * x.dil_w * col_bytes);
    pixel_offsets_.clear();
    slot_offsets_.clear();
    for (std::int64_t oy = 0; oy < x.out_h; ++oy)
      for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
        pixel_offsets_.push_back(oy * x.stride_h * row_bytes + ox * x.stride_w * col_bytes);
        slot_offsets_.push_back((oy * x.acc_stride_y + ox * x.acc_stride_x) * 4);
      }
    const kernels::AccInit init = x.init == isa::Init::kBias  ? kernels::AccInit::kBias
                                  : x.init == isa::Init::kAcc ? kernels::AccInit::kSelf
                                                              : kernels::AccInit::kZero;
    const auto pixels = static_cast<std::int64_t>(pixel_offsets_.size());
    const auto run = [&](std::int64_t begin, std::int64_t end) {
      if (amx) {
        kernels::amx::conv_dense(image, pixel_offsets_.data() + begin, end - begin,
                                 tap_offsets_.data(), *amx, init, bias, acc,
                                 slot_offsets_.data() + begin, kept != nullptr);
        return;
      }
      kernels::conv_dense(image, pixel_offsets_.data() + begin, end - begin, tap_offsets_.data(),
                          static_cast<std::int64_t>(tap_offsets_.size()), pairs, packed,
                          out_channels, dense->block, init, bias, acc,
                          slot_offsets_.data() + begin);
    };
    // Two threads for a conv of at least ~0.5 M multiply-accumulates (a few microseconds on
    // one core; less does not pay for the hand-over), split in half.
    const std::int64_t pair_macs = pixels * taps * pairs * out_channels;
    const bool two = split_ && pair_macs >= (std::int64_t{1} << 18);
    const std::int64_t blocks = (pixels + 15) / 16;
    if (amx && two && blocks >= 2) {
      // Whole 16-pixel blocks to each thread (a tile of fewer rows costs as much as a full
      // one): blocks [begin, end) are pixels [16 begin, 16 end).
      split_->run(blocks, blocks / 2, [&](std::int64_t begin, std::int64_t end) {
        run(16 * begin, std::min(16 * end, pixels));
      });
      return;
    }
    if (two && pixels >= 12) {
      split_->run(pixels, pixels / 2, run);
    } else {
      run(0, pixels);
    }
    return;
  }

  // Depthwise: weights as int16 rows [ky][kx][o] from the packed [cb][ky][kx][c].
  packed_weights_.resize(static_cast<std::size_t>(weight_count));
  std::int64_t n = 0;
  for (std::int64_t cb = 0; cb < x.oc_blocks; ++cb)
    for (std::int64_t tap = 0; tap < taps; ++tap)
      for (std::int64_t c = 0; c < cols; ++c, ++n)
        packed_weights_[static_cast<std::size_t>(tap * out_channels + cb * cols + c)] =
            static_cast<std::int16_t>(read_element(weights + to_u64(n) * wb, wb));
  sums_.resize(static_cast<std::size_t>(out_channels));
  pixel_.resize(static_cast<std::size_t>(in_channels));
  for (std::int64_t oy = 0; oy < x.out_h; ++oy) {
    for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
      std::fill(sums_.begin(), sums_.end(), 0u);
      for (std::int64_t ky = 0; ky < x.kh; ++ky) {
        const std::int64_t iy = oy * x.stride_h + ky * x.dil_h - x.pad_top;
        if (iy < 0 || iy >= in_h) continue;
        for (std::int64_t kx = 0; kx < x.kw; ++kx) {
          const std::int64_t ix = ox * x.stride_w + kx * x.dil_w - x.pad_left;
          if (ix < 0 || ix >= in_w) continue;
          widen_elements(in + to_u64(iy * x.in_stride_y + ix * x.in_stride_x) * ib, ib, in_channels,
                         pixel_.data(), u);
          const std::int64_t tap = ky * x.kw + kx;
          kernels::accumulate_depthwise(pixel_.data(), packed_weights_.data() + tap * out_channels,
                                        out_channels, sums_.data());
        }
      }
      write_pixel(oy, ox, sums_.data());
    }
  }
}

void Datapath::execute_conv_reference(const isa::Conv& x) {
  const std::uint64_t ib = element_bytes(x.elem);
  const std::uint64_t wb = static_cast<std::uint64_t>(weight_bytes_);
  const std::int64_t rows = matrix_rows_, cols = matrix_cols_;
  const std::int64_t in_channels = std::int64_t{x.ic_blocks} * rows;
  const std::int64_t out_channels = std::int64_t{x.oc_blocks} * cols;
  const std::int64_t in_h = (std::int64_t{x.out_h} - 1) * x.stride_h +
                            (std::int64_t{x.kh} - 1) * x.dil_h + 1 - x.pad_top - x.pad_bottom;
  const std::int64_t in_w = (std::int64_t{x.out_w} - 1) * x.stride_w +
                            (std::int64_t{x.kw} - 1) * x.dil_w + 1 - x.pad_left - x.pad_right;
  const std::uint8_t* in = scratchpads_[x.in_sp].data() + x.in_addr;
  const std::uint8_t* weights = scratchpads_[x.w_sp].data() + x.w_addr;
  const std::uint8_t* bias = scratchpads_[x.w_sp].data() + x.bias_addr;
  std::uint8_t* acc = scratchpads_[x.acc_sp].data() + x.acc_addr;
  const int u = static_cast<int>(x.in_shift);

  for (std::int64_t oy = 0; oy < x.out_h; ++oy) {
    for (std::int64_t ox = 0; ox < x.out_w; ++ox) {
      std::uint8_t* acc_pixel = acc + (oy * x.acc_stride_y + ox * x.acc_stride_x) * 4;
      for (std::int64_t o = 0; o < out_channels; ++o) {
        // int32 arithmetic with wrap-around (docs/isa.md), done in uint32 to be defined.
        std::uint32_t sum = 0;
        const std::int64_t ocb = o / cols, oc = o % cols;
        for (std::int64_t ky = 0; ky < x.kh; ++ky) {
          const std::int64_t iy = oy * x.stride_h + ky * x.dil_h - x.pad_top;
          if (iy < 0 || iy >= in_h) continue;
          for (std::int64_t kx = 0; kx < x.kw; ++kx) {
            const std::int64_t ix = ox * x.stride_w + kx * x.dil_w - x.pad_left;
            if (ix < 0 || ix >= in_w) continue;
            const std::uint8_t* in_pixel =
                in + static_cast<std::uint64_t>(iy * x.in_stride_y + ix * x.in_stride_x) * ib;
            if (x.depthwise) {
              // [cb][ky][kx][c]
              const std::int64_t w_index = ((ocb * x.kh + ky) * x.kw + kx) * cols + oc;
              const auto a = static_cast<std::int32_t>(intops::round_half_away(
                  read_element(in_pixel + o * static_cast<std::int64_t>(ib), ib), u));
              const std::int32_t w =
                  read_element(weights + w_index * static_cast<std::int64_t>(wb), wb);
              sum += static_cast<std::uint32_t>(a * w);
            } else {
              for (std::int64_t i = 0; i < in_channels; ++i) {
                const std::int64_t icb = i / rows, r = i % rows;
                const std::int64_t w_index =
                    ((((ocb * x.ic_blocks + icb) * x.kh + ky) * x.kw + kx) * rows + r) * cols + oc;
                const auto a = static_cast<std::int32_t>(intops::round_half_away(
                    read_element(in_pixel + i * static_cast<std::int64_t>(ib), ib), u));
                const std::int32_t w =
                    read_element(weights + w_index * static_cast<std::int64_t>(wb), wb);
                sum += static_cast<std::uint32_t>(a * w);
              }
            }
          }
        }
        std::uint8_t* slot = acc_pixel + o * 4;
        std::uint32_t start = 0;
        if (x.init == isa::Init::kBias)
          start = static_cast<std::uint32_t>(read_element(bias + o * 4, 4));
        if (x.init == isa::Init::kAcc) start = static_cast<std::uint32_t>(read_element(slot, 4));
        write_element(slot, 4, static_cast<std::int32_t>(start + sum));
      }
    }
  }
}

}  // namespace tessel::sim
