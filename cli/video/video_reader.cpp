#include "cli/video/video_reader.h"

extern "C" {
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
}

#include <cmath>
#include <cstring>
#include <iomanip>
#include <sstream>

namespace edgegan_cli::video {
namespace {

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << s << " s";
  return out.str();
}

}  // namespace

VideoReader::VideoReader(const std::string& path, int channels, const edgegan::ImageLimits& limits) : path_(path), channels_(channels) {
  AVFormatContext* opened = nullptr;
  int code = avformat_open_input(&opened, path.c_str(), nullptr, nullptr);  // frees what it made on failure
  format_.reset(opened);
  if (code < 0) throw edgegan::Error("'" + path + "' is not a video FFmpeg can read (" + av_error_text(code) + ")");
  code = avformat_find_stream_info(format_.get(), nullptr);
  if (code < 0) throw edgegan::Error("'" + path + "': cannot read its streams (" + av_error_text(code) + ")");
  const AVCodec* codec = nullptr;
  video_index_ = av_find_best_stream(format_.get(), AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (video_index_ == AVERROR_STREAM_NOT_FOUND) throw edgegan::Error("'" + path + "' has no video stream");
  if (video_index_ < 0 || !codec) throw edgegan::Error("'" + path + "': no decoder for its video stream (" + av_error_text(video_index_) + ")");
  const AVStream* stream = format_->streams[video_index_];
  const int64_t w = stream->codecpar->width, h = stream->codecpar->height;
  // The header's frame size, checked before any frame is decoded (as pictures are).
  edgegan::check_image_size("'" + path + "': a frame", w, h, limits);
  decoder_.reset(avcodec_alloc_context3(codec));
  if (!decoder_) throw edgegan::Error("out of memory for a video decoder");
  check_av(avcodec_parameters_to_context(decoder_.get(), stream->codecpar), "'" + path + "': video stream parameters");
  decoder_->pkt_timebase = stream->time_base;
  decoder_->thread_count = 0;  // FFmpeg picks (frame threads: decoding overlaps the model)
  code = avcodec_open2(decoder_.get(), codec, nullptr);
  if (code < 0) throw edgegan::Error("'" + path + "': cannot open the " + codec->name + " decoder (" + av_error_text(code) + ")");
}

AVRational VideoReader::frame_rate() const {
  AVRational r = av_guess_frame_rate(format_.get(), format_->streams[video_index_], nullptr);
  if (r.num <= 0 || r.den <= 0) r = AVRational{25, 1};  // no rate recorded: FFmpeg's own default
  return r;
}

int64_t VideoReader::announced_frames() const { return format_->streams[video_index_]->nb_frames; }

double VideoReader::duration_seconds() const {
  const AVStream* s = format_->streams[video_index_];
  if (s->duration > 0 && s->duration != AV_NOPTS_VALUE) return static_cast<double>(s->duration) * av_q2d(s->time_base);
  if (format_->duration > 0) return static_cast<double>(format_->duration) / AV_TIME_BASE;
  return 0;
}

DecodedFrame VideoReader::convert(const AVFrame& f) {
  if (f.width != decoder_->width || f.height != decoder_->height)
    throw edgegan::Error("'" + path_ + "' changes its frame size mid-stream (" + std::to_string(decoder_->width) + "x" +
                         std::to_string(decoder_->height) + " to " + std::to_string(f.width) + "x" + std::to_string(f.height) + ")");
  const AVPixelFormat to = channels_ == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24;
  scaler_.reset(sws_getCachedContext(scaler_.release(), f.width, f.height, static_cast<AVPixelFormat>(f.format), f.width, f.height, to,
                                     SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT, nullptr, nullptr, nullptr));
  if (!scaler_) throw edgegan::Error("'" + path_ + "': cannot convert its " + av_get_pix_fmt_name(static_cast<AVPixelFormat>(f.format)) + " frames");
  // The stream's own matrix and range in, full-range RGB out.
  const int source_full = enum_value(f.color_range) == AVCOL_RANGE_JPEG ? 1 : 0;
  sws_setColorspaceDetails(scaler_.get(), colour_matrix(enum_value(f.colorspace)), source_full, sws_getCoefficients(SWS_CS_DEFAULT), 1, 0, 1 << 16, 1 << 16);
  // libswscale reads and writes whole vectors past a row's end: it converts into an
  // FFmpeg frame (aligned, padded rows), copied row by row into the picture.
  if (!converted_) {
    converted_ = make_frame();
    converted_->format = to;
    converted_->width = f.width;
    converted_->height = f.height;
    check_av(av_frame_get_buffer(converted_.get(), 0), "a video frame");
  }
  sws_scale(scaler_.get(), f.data, f.linesize, 0, f.height, converted_->data, converted_->linesize);
  DecodedFrame out;
  out.image.width = f.width;
  out.image.height = f.height;
  out.image.channels = channels_;
  const size_t row = static_cast<size_t>(f.width) * static_cast<size_t>(channels_);
  out.image.pixels.resize(row * static_cast<size_t>(f.height));
  for (int y = 0; y < f.height; ++y)
    std::memcpy(out.image.pixels.data() + row * static_cast<size_t>(y), converted_->data[0] + static_cast<ptrdiff_t>(y) * converted_->linesize[0], row);
  out.pts = f.best_effort_timestamp;
  // Frames without a timestamp follow the last one at the stream's frame rate.
  if (out.pts == AV_NOPTS_VALUE)
    out.pts = last_pts_ == AV_NOPTS_VALUE ? 0 : last_pts_ + av_rescale_q(1, av_inv_q(frame_rate()), format_->streams[video_index_]->time_base);
  last_pts_ = out.pts;
  ++decoded_;
  return out;
}

std::optional<DecodedFrame> VideoReader::receive_frame() {
  const int code = avcodec_receive_frame(decoder_.get(), frame_.get());
  if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return std::nullopt;
  if (code < 0) throw edgegan::Error("'" + path_ + "': video frame " + std::to_string(decoded_ + 1) + " is damaged (" + av_error_text(code) + ")");
  DecodedFrame f = convert(*frame_);
  av_frame_unref(frame_.get());
  return f;
}

std::optional<VideoReader::Item> VideoReader::next(bool (*is_copied)(const AVStream*, void*), void* context) {
  while (!finished_) {
    if (auto f = receive_frame()) return Item(std::move(*f));
    if (draining_) {
      finished_ = true;
      check_complete();
      return std::nullopt;
    }
    const int code = av_read_frame(format_.get(), packet_.get());
    if (code == AVERROR_EOF) {
      draining_ = true;
      check_av(avcodec_send_packet(decoder_.get(), nullptr), "'" + path_ + "': end of the video");
      continue;
    }
    if (code < 0) throw edgegan::Error("'" + path_ + "' is damaged or truncated after " + std::to_string(decoded_) + " frames (" + av_error_text(code) + ")");
    if (packet_->stream_index == video_index_) {
      const int sent = avcodec_send_packet(decoder_.get(), packet_.get());
      av_packet_unref(packet_.get());
      if (sent < 0 && sent != AVERROR(EAGAIN))
        throw edgegan::Error("'" + path_ + "': video frame " + std::to_string(decoded_ + 1) + " is damaged (" + av_error_text(sent) + ")");
      continue;
    }
    if (is_copied(format_->streams[packet_->stream_index], context)) {
      CopiedPacket p{make_packet()};
      av_packet_move_ref(p.packet.get(), packet_.get());
      return Item(std::move(p));
    }
    av_packet_unref(packet_.get());
  }
  return std::nullopt;
}

void VideoReader::check_complete() const {
  if (decoded_ == 0) throw edgegan::Error("'" + path_ + "' holds no decodable video frame");
  const int64_t announced = announced_frames();
  if (announced > 0 && decoded_ < announced)
    throw edgegan::Error("'" + path_ + "' is truncated: " + std::to_string(decoded_) + " of the " + std::to_string(announced) +
                         " frames it announces could be decoded");
  // Containers that announce no frame count (Matroska) still record their duration.
  const double duration = duration_seconds();
  if (duration > 0 && last_pts_ != AV_NOPTS_VALUE) {
    const AVStream* s = format_->streams[video_index_];
    const double start = s->start_time == AV_NOPTS_VALUE ? 0 : static_cast<double>(s->start_time) * av_q2d(s->time_base);
    const double reached = static_cast<double>(last_pts_) * av_q2d(s->time_base) - start + 1 / av_q2d(frame_rate());
    if (reached < duration * 0.95 - 0.5)
      throw edgegan::Error("'" + path_ + "' is truncated: its frames end at " + seconds_text(reached) + " of the " + seconds_text(duration) +
                           " it announces");
  }
}

}  // namespace edgegan_cli::video
