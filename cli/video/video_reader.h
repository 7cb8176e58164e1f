// Reads a video file through FFmpeg's libraries: the best video stream decoded into
// 8-bit pictures (RGB or grey, converted with the stream's own colour matrix and
// range), and every other stream's packets as they are, for copying.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "cli/video/av_util.h"
#include "edgegan/image.h"

namespace edgegan_cli::video {

// A decoded picture and where it sits in time (pts in the video stream's time base).
struct DecodedFrame {
  edgegan::Image image;
  int64_t pts = 0;
};

// A packet of a stream other than the video (audio, subtitles), to be copied.
struct CopiedPacket {
  Packet packet;  // stream_index: the input stream's
};

class VideoReader {
 public:
  // Opens `path` and its video decoder; Error naming the file when it is not a video
  // FFmpeg can decode, or its frames exceed `limits`. `channels`: 1 or 3.
  VideoReader(const std::string& path, int channels, const edgegan::ImageLimits& limits);
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  AVFormatContext* format() const { return format_.get(); }
  const AVStream* video_stream() const { return format_->streams[video_index_]; }
  int video_index() const { return video_index_; }
  const AVCodecContext* decoder() const { return decoder_.get(); }
  int width() const { return decoder_->width; }
  int height() const { return decoder_->height; }
  AVRational frame_rate() const;
  // Frames the container announces (0: unknown) and the stream's duration in seconds (0: unknown).
  int64_t announced_frames() const;
  double duration_seconds() const;

  // The next decoded frame or packet to copy, in file order; nullopt at the end. Packets
  // of streams that are neither the video nor wanted (is_copied) are dropped. At the end
  // of the file, checks that the video was whole (Error when it stops short of the frames
  // or the duration the container announces: a truncated file).
  using Item = std::variant<DecodedFrame, CopiedPacket>;
  std::optional<Item> next(bool (*is_copied)(const AVStream*, void*), void* context);

  int64_t frames_decoded() const { return decoded_; }

 private:
  std::optional<DecodedFrame> receive_frame();
  DecodedFrame convert(const AVFrame& frame);
  void check_complete() const;

  std::string path_;
  int channels_;
  InputFormat format_;
  int video_index_ = -1;
  CodecContext decoder_;
  Frame frame_ = make_frame();
  Packet packet_ = make_packet();
  Scaler scaler_;
  bool draining_ = false, finished_ = false;
  int64_t decoded_ = 0;
  int64_t last_pts_ = AV_NOPTS_VALUE;
};

}  // namespace edgegan_cli::video
