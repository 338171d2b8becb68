#include "slimtrain/data/image_decode.hpp"

// clang-format off
#include <cstdio>  // jpeglib.h needs FILE and size_t first
#include <jpeglib.h>
#include <jerror.h>
// clang-format on
#include <png.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csetjmp>
#include <cstring>

#include "slimtrain/core/error.hpp"

namespace slimtrain::data {
namespace {

bool starts_with(const std::uint8_t* bytes, std::size_t size, const char* magic, std::size_t n,
                 std::size_t at = 0) {
  return size >= at + n && std::memcmp(bytes + at, magic, n) == 0;
}

// PIL's L = R * 299/1000 + G * 587/1000 + B * 114/1000, in its 16-bit fixed point.
std::uint8_t luma(const std::uint8_t* rgb) {
  return static_cast<std::uint8_t>((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >>
                                   16);
}

// From what the decoder produced (1 or 3 channels) to what was asked for.
Image to_channels(Image in, int channels) {
  if (in.channels == channels) return in;
  Image out{in.width, in.height, channels, {}};
  const std::size_t pixels = static_cast<std::size_t>(in.width) * in.height;
  out.pixels.resize(pixels * static_cast<std::size_t>(channels));
  for (std::size_t i = 0; i < pixels; ++i) {
    if (channels == 1) {
      out.pixels[i] = luma(&in.pixels[3 * i]);
    } else {
      std::memset(&out.pixels[3 * i], in.pixels[i], 3);
    }
  }
  return out;
}

// libjpeg reports through callbacks; the decoder returns here by longjmp (no C++ objects are
// created between setjmp and the calls that may jump).
struct JpegErrors {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void jpeg_fail(j_common_ptr c) {
  auto* e = reinterpret_cast<JpegErrors*>(c->err);
  (*c->err->format_message)(c, e->message);
  std::longjmp(e->jump, 1);
}

void jpeg_note(j_common_ptr c, int level) {
  // Warnings (level -1) mean corrupt or missing data ("Premature end of JPEG file"): the decoder
  // would fill the rest with grey. Stray bytes between markers are harmless and common.
  if (level < 0 && c->err->msg_code != JWRN_EXTRANEOUS_DATA) jpeg_fail(c);
}

Image decode_jpeg(const std::vector<std::uint8_t>& bytes, const std::string& path, int channels) {
  jpeg_decompress_struct info;
  JpegErrors errors;
  Image out;
  info.err = jpeg_std_error(&errors.mgr);
  errors.mgr.error_exit = jpeg_fail;
  errors.mgr.emit_message = jpeg_note;
  std::vector<JSAMPROW> rows;
  volatile bool unsupported = false;  // set between setjmp and a possible longjmp
  if (setjmp(errors.jump)) {
    jpeg_destroy_decompress(&info);
    SLIMTRAIN_THROW(DataError, path, ": truncated or corrupt JPEG (libjpeg: ", errors.message, ")");
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  if (info.jpeg_color_space == JCS_CMYK || info.jpeg_color_space == JCS_YCCK) {
    unsupported = true;
  } else {
    info.out_color_space = info.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&info);
    out.width = static_cast<int>(info.output_width);
    out.height = static_cast<int>(info.output_height);
    out.channels = info.output_components;
    out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * out.channels);
    rows.resize(static_cast<std::size_t>(out.height));
    for (int y = 0; y < out.height; ++y)
      rows[static_cast<std::size_t>(y)] =
          out.pixels.data() + static_cast<std::size_t>(y) * out.width * out.channels;
    while (info.output_scanline < info.output_height)
      jpeg_read_scanlines(&info, rows.data() + info.output_scanline,
                          info.output_height - info.output_scanline);
    jpeg_finish_decompress(&info);
  }
  jpeg_destroy_decompress(&info);
  if (unsupported)
    SLIMTRAIN_THROW(DataError, path, ": CMYK JPEG is not supported (convert it to RGB)");
  return to_channels(std::move(out), channels);
}

struct PngInput {
  const std::vector<std::uint8_t>* bytes;
  std::size_t at;
  char message[256];
};

[[noreturn]] void png_fail(png_structp png, png_const_charp message) {
  auto* in = static_cast<PngInput*>(png_get_error_ptr(png));
  std::snprintf(in->message, sizeof in->message, "%s", message);
  std::longjmp(png_jmpbuf(png), 1);
}

void png_quiet(png_structp, png_const_charp) {}  // ancillary-chunk warnings: PIL ignores them too

void png_read_memory(png_structp png, png_bytep out, png_size_t n) {
  auto* in = static_cast<PngInput*>(png_get_io_ptr(png));
  if (in->bytes->size() - in->at < n) png_error(png, "file ends early");
  std::memcpy(out, in->bytes->data() + in->at, n);
  in->at += n;
}

Image decode_png(const std::vector<std::uint8_t>& bytes, const std::string& path, int channels) {
  PngInput in{&bytes, 0, {}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &in, png_fail, png_quiet);
  if (png == nullptr) SLIMTRAIN_THROW(Error, path, ": libpng could not start");
  png_infop info = png_create_info_struct(png);
  Image out;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    SLIMTRAIN_THROW(DataError, path, ": truncated or corrupt PNG (libpng: ", in.message, ")");
  }
  png_set_read_fn(png, &in, png_read_memory);
  png_read_info(png, info);
  const int type = png_get_color_type(png, info);
  png_set_strip_16(png);  // the high byte, as PIL
  png_set_packing(png);
  if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (type == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
    png_set_expand_gray_1_2_4_to_8(png);
  if (type & PNG_COLOR_MASK_ALPHA) png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  out.width = static_cast<int>(png_get_image_width(png, info));
  out.height = static_cast<int>(png_get_image_height(png, info));
  out.channels = png_get_channels(png, info);
  out.pixels.resize(static_cast<std::size_t>(out.width) * out.height * out.channels);
  rows.resize(static_cast<std::size_t>(out.height));
  for (int y = 0; y < out.height; ++y)
    rows[static_cast<std::size_t>(y)] =
        out.pixels.data() + static_cast<std::size_t>(y) * out.width * out.channels;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  return to_channels(std::move(out), channels);
}

}  // namespace

std::string sniff_image_format(const std::uint8_t* bytes, std::size_t size) {
  if (starts_with(bytes, size, "\xFF\xD8\xFF", 3)) return "JPEG";
  if (starts_with(bytes, size, "\x89PNG\r\n\x1A\n", 8)) return "PNG";
  if (starts_with(bytes, size, "GIF8", 4)) return "GIF";
  if (starts_with(bytes, size, "BM", 2)) return "BMP";
  if (starts_with(bytes, size, "RIFF", 4) && starts_with(bytes, size, "WEBP", 4, 8)) return "WebP";
  if (starts_with(bytes, size, "II*\0", 4) || starts_with(bytes, size, "MM\0*", 4)) return "TIFF";
  return "";
}

Image decode_image(const std::vector<std::uint8_t>& bytes, const std::string& path, int channels) {
  if (channels != 1 && channels != 3)
    SLIMTRAIN_THROW(ConfigError, "--channels: ", channels, " must be 1 or 3");
  const std::string format = sniff_image_format(bytes.data(), bytes.size());
  if (format == "JPEG") return decode_jpeg(bytes, path, channels);
  if (format == "PNG") return decode_png(bytes, path, channels);
  if (bytes.empty()) SLIMTRAIN_THROW(DataError, path, ": empty file, not an image");
  if (!format.empty())
    SLIMTRAIN_THROW(DataError, path, ": ", format, " images are not supported (JPEG and PNG are)");
  SLIMTRAIN_THROW(DataError, path, ": not a JPEG or PNG image");
}

Image load_image(const std::string& path, int channels) {
  // One read of the whole file: images are small, and a stream iterator costs more than decoding.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) SLIMTRAIN_THROW(DataError, path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  std::vector<std::uint8_t> bytes;
  std::size_t used = 0;
  bool failed = ::fstat(fd, &st) != 0;
  if (!failed) {
    bytes.resize(static_cast<std::size_t>(st.st_size) + 1);  // +1: sees growth, ends at EOF
    for (;;) {
      if (used == bytes.size()) bytes.resize(2 * bytes.size());
      const ssize_t got = ::read(fd, bytes.data() + used, bytes.size() - used);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        failed = got < 0;
        break;
      }
      used += static_cast<std::size_t>(got);
    }
  }
  const int err = errno;
  ::close(fd);
  if (failed) SLIMTRAIN_THROW(DataError, path, ": cannot read: ", std::strerror(err));
  bytes.resize(used);
  return decode_image(bytes, path, channels);
}

}  // namespace slimtrain::data
