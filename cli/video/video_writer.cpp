#include "cli/video/video_writer.h"

extern "C" {
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
}

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "cli/video/video_reader.h"

namespace edgegan_cli::video {
namespace {

bool supports(const AVCodec* codec, AVPixelFormat format) {
  if (!codec->pix_fmts) return false;
  for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
    if (*p == format) return true;
  return false;
}

// 8-bit RGB in some layout (FFV1 takes BGR0, others GBRP): lossless from our pixels.
bool rgb8(AVPixelFormat f) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(f);
  return d && (d->flags & AV_PIX_FMT_FLAG_RGB) && !(d->flags & AV_PIX_FMT_FLAG_PAL) && d->nb_components >= 3 && d->comp[0].depth == 8 &&
         !(d->flags & AV_PIX_FMT_FLAG_ALPHA);
}

// What the encoder is fed: grey as grey where it takes it; colour as 8-bit RGB where it
// takes it (FFV1: lossless, no matrix), else 4:2:0 YUV (what every player decodes).
AVPixelFormat choose_pixel_format(const AVCodec* codec, int channels) {
  if (channels == 1 && supports(codec, AV_PIX_FMT_GRAY8)) return AV_PIX_FMT_GRAY8;
  if (codec->pix_fmts)
    for (const AVPixelFormat* p = codec->pix_fmts; *p != AV_PIX_FMT_NONE; ++p)
      if (rgb8(*p)) return *p;
  if (supports(codec, AV_PIX_FMT_YUV420P)) return AV_PIX_FMT_YUV420P;
  if (codec->pix_fmts) return codec->pix_fmts[0];
  return AV_PIX_FMT_YUV420P;
}

const AVCodec* choose_encoder(const AVOutputFormat* container, const EncoderChoice& choice, const std::string& path) {
  if (!choice.codec.empty()) {
    const AVCodec* c = avcodec_find_encoder_by_name(choice.codec.c_str());
    if (!c) throw edgegan::Error("--codec " + choice.codec + ": this FFmpeg has no such encoder (ffmpeg -encoders lists them)");
    if (c->type != AVMEDIA_TYPE_VIDEO) throw edgegan::Error("--codec " + choice.codec + " is not a video encoder");
    if (avformat_query_codec(container, c->id, FF_COMPLIANCE_NORMAL) != 1)
      throw edgegan::Error("--codec " + choice.codec + " cannot go into a " + container->name + " file ('" + path + "')");
    return c;
  }
  // H.264 through x264 is what a user of a video tool expects by default.
  if (const AVCodec* x264 = avcodec_find_encoder_by_name("libx264"))
    if (avformat_query_codec(container, x264->id, FF_COMPLIANCE_NORMAL) == 1) return x264;
  const AVCodec* c = avcodec_find_encoder(container->video_codec);
  if (!c) throw edgegan::Error("'" + path + "': no video encoder for a " + std::string(container->name) + " file; name one with --codec");
  return c;
}

}  // namespace

VideoWriter::VideoWriter(const std::string& path, const VideoReader& source, int width, int height, int channels, const EncoderChoice& choice)
    : path_(path), channels_(channels) {
  const AVOutputFormat* container = av_guess_format(nullptr, path.c_str(), nullptr);
  if (!container) throw edgegan::Error("'" + path + "': no video container has that extension (use .mp4, .mkv, .mov or .webm)");
  AVFormatContext* made = nullptr;
  check_av(avformat_alloc_output_context2(&made, container, nullptr, path.c_str()), "'" + path + "'");
  format_.reset(made);
  // Copied streams go in as they are, also where FFmpeg calls their mapping experimental
  // (FLAC in MP4), as its command line does with -strict experimental.
  format_->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
  const AVCodec* codec = choose_encoder(container, choice, path);

  const AVStream* in = source.video_stream();
  source_time_base_ = in->time_base;
  encoder_.reset(avcodec_alloc_context3(codec));
  if (!encoder_) throw edgegan::Error("out of memory for a video encoder");
  AVCodecContext* e = encoder_.get();
  e->width = width;
  e->height = height;
  e->pix_fmt = choose_pixel_format(codec, channels);
  e->time_base = in->time_base;
  e->framerate = source.frame_rate();
  e->sample_aspect_ratio = in->codecpar->sample_aspect_ratio;
  e->thread_count = 0;
  // The colour description: the input's where it gave one, else what its size implies.
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(e->pix_fmt);
  const bool rgb = desc && (desc->flags & AV_PIX_FMT_FLAG_RGB);
  const AVCodecParameters* p = in->codecpar;
  if (rgb) {
    e->colorspace = AVCOL_SPC_RGB;
    e->color_range = AVCOL_RANGE_JPEG;
  } else if (e->pix_fmt != AV_PIX_FMT_GRAY8) {
    const AVColorSpace space = valid_or(p->color_space, AVCOL_SPC_NB, AVCOL_SPC_UNSPECIFIED);
    const bool given = space != AVCOL_SPC_UNSPECIFIED && space != AVCOL_SPC_RGB;
    e->colorspace = given ? space : height >= 720 ? AVCOL_SPC_BT709 : AVCOL_SPC_SMPTE170M;
    e->color_range = enum_value(p->color_range) == AVCOL_RANGE_JPEG ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  }
  e->color_primaries = valid_or(p->color_primaries, AVCOL_PRI_NB, AVCOL_PRI_UNSPECIFIED);
  e->color_trc = valid_or(p->color_trc, AVCOL_TRC_NB, AVCOL_TRC_UNSPECIFIED);
  if (format_->oformat->flags & AVFMT_GLOBALHEADER) e->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  if (choice.crf >= 0) {
    if (av_opt_set_int(e->priv_data, "crf", choice.crf, 0) < 0 && av_opt_set_double(e->priv_data, "crf", choice.crf, 0) < 0)
      throw edgegan::Error("--crf: the " + std::string(codec->name) + " encoder has no crf setting");
  }
  int code = avcodec_open2(e, codec, nullptr);
  if (code < 0)
    throw edgegan::Error("cannot open the " + std::string(codec->name) + " encoder for " + std::to_string(width) + "x" + std::to_string(height) + " " +
                         av_get_pix_fmt_name(e->pix_fmt) + " frames (" + av_error_text(code) + ")" +
                         (e->pix_fmt == AV_PIX_FMT_YUV420P && (width % 2 || height % 2) ? ": 4:2:0 needs an even width and height" : ""));

  video_ = avformat_new_stream(format_.get(), nullptr);
  if (!video_) throw edgegan::Error("out of memory for a video stream");
  check_av(avcodec_parameters_from_context(video_->codecpar, e), "'" + path + "': video stream");
  video_->time_base = e->time_base;
  video_->avg_frame_rate = e->framerate;

  // The other streams, where the container can hold them, unchanged.
  AVFormatContext* in_format = source.format();
  for (unsigned i = 0; i < in_format->nb_streams; ++i) {
    const AVStream* s = in_format->streams[i];
    if (static_cast<int>(i) == source.video_index()) continue;
    const AVMediaType type = s->codecpar->codec_type;
    if (type != AVMEDIA_TYPE_AUDIO && type != AVMEDIA_TYPE_SUBTITLE) continue;
    const char* name = avcodec_get_name(s->codecpar->codec_id);
    if (avformat_query_codec(container, s->codecpar->codec_id, FF_COMPLIANCE_NORMAL) != 1) {
      skipped_.push_back(std::string(av_get_media_type_string(type)) + " stream " + std::to_string(i) + " (" + name + ")");
      continue;
    }
    AVStream* out = avformat_new_stream(format_.get(), nullptr);
    if (!out) throw edgegan::Error("out of memory for a stream");
    check_av(avcodec_parameters_copy(out->codecpar, s->codecpar), "'" + path + "': copying stream " + std::to_string(i));
    out->codecpar->codec_tag = 0;
    out->time_base = s->time_base;
    av_dict_copy(&out->metadata, s->metadata, 0);
    copied_[static_cast<int>(i)] = {out, s->time_base};
  }

  // Written under a temporary name in the same folder (the engine's atomic writer's
  // prefix, so a temporary left by a killed run is cleared by a later write there).
  const std::filesystem::path target(path);
  const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  std::string temp = dir + "/.edgegan-tmp-" + std::to_string(::getpid()) + "-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw edgegan::Error("cannot create a file in '" + dir + "'");
  ::close(fd);
  temp_.path = temp;
  code = avio_open(&format_->pb, temp_.path.c_str(), AVIO_FLAG_WRITE);
  if (code < 0) throw edgegan::Error("cannot write '" + path + "' (" + av_error_text(code) + ")");
  check_av(avformat_write_header(format_.get(), nullptr), "'" + path + "': writing the header");
}

VideoWriter::TempFile::~TempFile() {
  if (!keep && !path.empty()) ::unlink(path.c_str());
}

std::string VideoWriter::pixel_format() const { return av_get_pix_fmt_name(encoder_->pix_fmt); }

void VideoWriter::write_frame(const edgegan::Image& image, int64_t pts) {
  AVCodecContext* e = encoder_.get();
  if (image.width != e->width || image.height != e->height || image.channels != channels_)
    throw edgegan::Error("internal: a " + std::to_string(image.width) + "x" + std::to_string(image.height) + " frame for a " +
                         std::to_string(e->width) + "x" + std::to_string(e->height) + " video");
  const AVPixelFormat from = channels_ == 1 ? AV_PIX_FMT_GRAY8 : AV_PIX_FMT_RGB24;
  if (!scaler_) {
    scaler_.reset(sws_getContext(e->width, e->height, from, e->width, e->height, e->pix_fmt, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                                 nullptr, nullptr, nullptr));
    if (!scaler_) throw edgegan::Error(std::string("cannot convert frames to ") + av_get_pix_fmt_name(e->pix_fmt));
    const bool full = e->color_range != AVCOL_RANGE_MPEG;
    sws_setColorspaceDetails(scaler_.get(), sws_getCoefficients(SWS_CS_DEFAULT), 1, colour_matrix(e->colorspace), full ? 1 : 0, 0, 1 << 16, 1 << 16);
  }
  // The picture into an FFmpeg frame first: libswscale reads whole vectors past a row's
  // end, which a frame's aligned, padded rows allow and a plain picture does not.
  if (!source_) {
    source_ = make_frame();
    source_->format = from;
    source_->width = e->width;
    source_->height = e->height;
    check_av(av_frame_get_buffer(source_.get(), 0), "a video frame");
  }
  const size_t row = static_cast<size_t>(image.width) * static_cast<size_t>(channels_);
  for (int64_t y = 0; y < image.height; ++y)
    std::memcpy(source_->data[0] + y * source_->linesize[0], image.pixels.data() + row * static_cast<size_t>(y), row);
  // The encoder may still hold the last frame (reference-counted): make_writable gives
  // this one a buffer of its own only then, else reuses it.
  if (!frame_->buf[0]) {
    frame_->format = e->pix_fmt;
    frame_->width = e->width;
    frame_->height = e->height;
    frame_->colorspace = e->colorspace;
    frame_->color_range = e->color_range;
    check_av(av_frame_get_buffer(frame_.get(), 0), "a video frame");
  } else {
    check_av(av_frame_make_writable(frame_.get()), "a video frame");
  }
  sws_scale(scaler_.get(), source_->data, source_->linesize, 0, e->height, frame_->data, frame_->linesize);
  frame_->pts = pts;
  check_av(avcodec_send_frame(e, frame_.get()), "'" + path_ + "': encoding");
  drain_encoder();
}

void VideoWriter::drain_encoder() {
  for (;;) {
    const int code = avcodec_receive_packet(encoder_.get(), packet_.get());
    if (code == AVERROR(EAGAIN) || code == AVERROR_EOF) return;
    check_av(code, "'" + path_ + "': encoding");
    av_packet_rescale_ts(packet_.get(), encoder_->time_base, video_->time_base);
    packet_->stream_index = video_->index;
    check_av(av_interleaved_write_frame(format_.get(), packet_.get()), "'" + path_ + "': writing");
  }
}

void VideoWriter::write_copied(AVPacket* packet) {
  const auto it = copied_.find(packet->stream_index);
  if (it == copied_.end()) {
    av_packet_unref(packet);
    return;
  }
  av_packet_rescale_ts(packet, it->second.second, it->second.first->time_base);
  packet->stream_index = it->second.first->index;
  packet->pos = -1;
  check_av(av_interleaved_write_frame(format_.get(), packet), "'" + path_ + "': writing a copied stream");
}

void VideoWriter::finish() {
  check_av(avcodec_send_frame(encoder_.get(), nullptr), "'" + path_ + "': finishing the encoder");
  drain_encoder();
  check_av(av_write_trailer(format_.get()), "'" + path_ + "': writing the index");
  check_av(avio_closep(&format_->pb), "'" + path_ + "': closing");
  ::chmod(temp_.path.c_str(), 0644);
  if (::rename(temp_.path.c_str(), path_.c_str()) != 0) throw edgegan::Error("cannot move the finished video into place at '" + path_ + "'");
  temp_.keep = true;
}

}  // namespace edgegan_cli::video
