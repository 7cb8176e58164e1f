// Writes a video file through FFmpeg's libraries: 8-bit pictures encoded by the chosen
// encoder into the container the file's extension names, beside copies of the input's
// other streams (audio, subtitles), with the input's timestamps, frame rate and colour
// description. The file appears only when finish() succeeds: until then it is a
// temporary in the same folder, removed if the writer is destroyed unfinished.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/video/av_util.h"
#include "edgegan/image.h"

namespace edgegan_cli::video {

class VideoReader;

struct EncoderChoice {
  std::string codec;  // an FFmpeg encoder name; "": libx264 where the container takes it, else the container's default
  int crf = -1;       // the encoder's constant-rate-factor quality; < 0: its default
};

class VideoWriter {
 public:
  // Chooses the container from `path`'s extension and opens the encoder for frames of
  // width x height (`channels`: what the pictures hold, 1 or 3), timed like `source`'s
  // video. Streams of `source` that the container can hold are copied (copies_stream);
  // the others are listed in skipped(). Error naming the problem (unknown container or
  // encoder, a size the encoder refuses) before anything is written.
  VideoWriter(const std::string& path, const VideoReader& source, int width, int height, int channels, const EncoderChoice& choice);
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  bool copies_stream(int input_index) const { return copied_.count(input_index) != 0; }
  const std::vector<std::string>& skipped() const { return skipped_; }
  std::string encoder_name() const { return encoder_->codec->name; }
  std::string pixel_format() const;

  // One picture at `pts` (in the input video stream's time base).
  void write_frame(const edgegan::Image& image, int64_t pts);
  // A packet of a copied input stream (its stream_index the input's); consumed.
  void write_copied(AVPacket* packet);
  // Flushes the encoder, writes the container's index and renames the temporary into place.
  void finish();

 private:
  void drain_encoder();

  // The temporary the video is written to: removed when the writer goes without finish()
  // (also when its constructor fails), after the file is closed (format_ is declared after).
  struct TempFile {
    std::string path;
    bool keep = false;
    ~TempFile();
  };

  std::string path_;
  TempFile temp_;
  OutputFormat format_;
  CodecContext encoder_;
  AVStream* video_ = nullptr;
  AVRational source_time_base_{};
  std::map<int, std::pair<AVStream*, AVRational>> copied_;  // input index -> output stream, input time base
  std::vector<std::string> skipped_;
  Scaler scaler_;
  Frame frame_ = make_frame();
  Packet packet_ = make_packet();
  int channels_ = 3;
};

}  // namespace edgegan_cli::video
