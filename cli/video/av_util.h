// Small helpers over FFmpeg's C API for the video reader and writer: owning handles
// that free what FFmpeg allocated, and FFmpeg's error codes as edgegan errors.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
}

#include <cstring>
#include <memory>
#include <string>

#include "edgegan/edgegan.h"

namespace edgegan_cli::video {

// "Invalid data found when processing input" for an AVERROR code.
inline std::string av_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

// Throws edgegan::Error("<what>: <FFmpeg's text>") when code < 0; returns code.
inline int check_av(int code, const std::string& what) {
  if (code < 0) throw edgegan::Error(what + ": " + av_error_text(code));
  return code;
}

struct CodecContextFree {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const { sws_freeContext(s); }
};

struct InputFormatClose {
  void operator()(AVFormatContext* f) const { avformat_close_input(&f); }
};
struct OutputFormatFree {  // closes the file first, if open
  void operator()(AVFormatContext* f) const {
    if (f->pb) avio_closep(&f->pb);
    avformat_free_context(f);
  }
};

using CodecContext = std::unique_ptr<AVCodecContext, CodecContextFree>;
using InputFormat = std::unique_ptr<AVFormatContext, InputFormatClose>;
using OutputFormat = std::unique_ptr<AVFormatContext, OutputFormatFree>;
using Frame = std::unique_ptr<AVFrame, FrameFree>;
using Packet = std::unique_ptr<AVPacket, PacketFree>;
using Scaler = std::unique_ptr<SwsContext, SwsFree>;

inline Frame make_frame() {
  Frame f(av_frame_alloc());
  if (!f) throw edgegan::Error("out of memory for a video frame");
  return f;
}
inline Packet make_packet() {
  Packet p(av_packet_alloc());
  if (!p) throw edgegan::Error("out of memory for a video packet");
  return p;
}

// The number an FFmpeg enum field holds, read without loading it as the enum: a damaged
// stream can leave any value there, and an out-of-range enum load is undefined.
template <class Enum>
int enum_value(const Enum& field) {
  static_assert(sizeof(Enum) == sizeof(int));
  int v;
  std::memcpy(&v, &field, sizeof v);
  return v;
}

// A colour description field as the enum when it holds one of its values, else `fallback`.
template <class Enum>
Enum valid_or(const Enum& field, int count, Enum fallback) {
  const int v = enum_value(field);
  return v >= 0 && v < count ? static_cast<Enum>(v) : fallback;
}

// libswscale's coefficients for a stream's colour matrix (BT.601 when unspecified or
// unknown, as FFmpeg's own tools assume).
inline const int* colour_matrix(int space) {
  const int index = space == AVCOL_SPC_UNSPECIFIED || space < 0 || space > AVCOL_SPC_BT2020_CL ? SWS_CS_DEFAULT : space;
  return sws_getCoefficients(index);
}

}  // namespace edgegan_cli::video
