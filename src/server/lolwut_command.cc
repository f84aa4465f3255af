// LOLWUT [VERSION v] [args...]: computer art and the version line, as Redis 7.0 does it.
//
// Version 5 draws a grid of squares that tilt and drift more on every row (after Georg Nees's
// "Schotter"), in Braille characters; version 6 a night skyline in grey ANSI blocks; any other
// version just the version line. The art is Lavik's own drawing (Redis draws with other random
// choices, so no two runs of either match byte for byte); the arguments (columns, squares per
// row and column for 5; columns and rows for 6), their defaults and limits, the captions and the
// final "Redis ver. 7.0.15" line are Redis's.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/ascii.h"
#include "base/numbers.h"
#include "protocol/errors.h"
#include "server/command_registry.h"

namespace lavik {
namespace {

constexpr std::string_view kVersionLine = "Redis ver. 7.0.15\n";

// A 1-bit canvas rendered 2x4 pixels per Braille character (U+2800 + dot bits).
class Canvas {
 public:
  Canvas(int width, int height) : width_(width), height_(height), pixels_(width * height) {}
  void Set(int x, int y) {
    if (x >= 0 && x < width_ && y >= 0 && y < height_) pixels_[y * width_ + x] = 1;
  }
  void Line(int x0, int y0, int x1, int y1) {
    const int steps = std::max(std::abs(x1 - x0), std::abs(y1 - y0));
    for (int i = 0; i <= steps; ++i) {
      const double t = steps == 0 ? 0 : static_cast<double>(i) / steps;
      Set(static_cast<int>(std::lround(x0 + (x1 - x0) * t)),
          static_cast<int>(std::lround(y0 + (y1 - y0) * t)));
    }
  }
  std::string Render() const {
    // Dot bit of the pixel at (dx, dy) inside a character cell.
    static constexpr int kBit[4][2] = {{0, 3}, {1, 4}, {2, 5}, {6, 7}};
    std::string out;
    for (int y = 0; y < height_; y += 4) {
      for (int x = 0; x < width_; x += 2) {
        int dots = 0;
        for (int dy = 0; dy < 4; ++dy) {
          for (int dx = 0; dx < 2; ++dx) {
            if (Get(x + dx, y + dy)) dots |= 1 << kBit[dy][dx];
          }
        }
        const int code = 0x2800 + dots;  // three UTF-8 bytes
        out += static_cast<char>(0xE0 | (code >> 12));
        out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (code & 0x3F));
      }
      out += '\n';
    }
    return out;
  }

 private:
  bool Get(int x, int y) const {
    return x >= 0 && x < width_ && y >= 0 && y < height_ && pixels_[y * width_ + x] != 0;
  }
  int width_, height_;
  std::vector<uint8_t> pixels_;
};

// Integer arguments in order, each clamped to [lo, hi]; false after replying to a non-integer.
bool ArgsOrReply(Context& ctx, size_t from, std::span<int64_t> values, int64_t lo, int64_t hi) {
  for (size_t i = 0; i < values.size() && from + i < ctx.args.size(); ++i) {
    if (!ParseInt64(ctx.args[from + i], &values[i])) {
      ctx.reply->Error(kErrNotInteger);
      return false;
    }
    values[i] = std::clamp(values[i], lo, hi);
  }
  return true;
}

std::string Schotter(int cols, int per_row, int per_col) {
  const int width = cols * 2;
  const int pad = cols > 2 ? 2 : 0;
  const double side = static_cast<double>(width - 2 * pad) / per_row;
  const int height = static_cast<int>(side * per_col) + 2 * pad;
  Canvas canvas(width, height);
  std::mt19937 rng(std::random_device{}());
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int row = 0; row < per_col; ++row) {
    const double disorder = static_cast<double>(row) / per_col;  // grows down the page
    for (int col = 0; col < per_row; ++col) {
      const double cx = pad + (col + 0.5) * side + unit(rng) * disorder * side / 3;
      const double cy = pad + (row + 0.5) * side + unit(rng) * disorder * side / 3;
      const double angle = unit(rng) * disorder;
      const double r = side * 0.9 / std::sqrt(2.0);  // corner distance of a 0.9-side square
      int px[4], py[4];
      for (int k = 0; k < 4; ++k) {
        const double a = angle + M_PI / 4 + k * M_PI / 2;
        px[k] = static_cast<int>(std::lround(cx + std::cos(a) * r));
        py[k] = static_cast<int>(std::lround(cy + std::sin(a) * r));
      }
      for (int k = 0; k < 4; ++k) canvas.Line(px[k], py[k], px[(k + 1) % 4], py[(k + 1) % 4]);
    }
  }
  return canvas.Render();
}

std::string Skyline(int cols, int rows) {
  std::mt19937 rng(std::random_device{}());
  std::vector<int> heights(cols);
  int h = rows / 2;
  for (int x = 0; x < cols; ++x) {
    if (x % 4 == 0) h = std::clamp(h + static_cast<int>(rng() % 7) - 3, 1, rows);
    heights[x] = h;
  }
  std::string out;
  for (int y = 0; y < rows; ++y) {
    for (int x = 0; x < cols; ++x) {
      const bool building = rows - y <= heights[x];
      const bool window = building && (x % 2 == 1) && (y % 2 == 0) && rng() % 3 == 0;
      const int grey = window ? 255 : building ? 236 + (x / 4) % 4 : 232;
      out += "\033[48;5;" + std::to_string(grey) + "m \033[0m";
    }
    out += '\n';
  }
  return out;
}

Task Lolwut(Context& ctx) {
  int64_t version = 7;
  size_t from = ctx.args.size();  // where the version's own arguments start
  if (ctx.args.size() >= 3 && EqualsNoCase(ctx.args[1], "version")) {
    if (!ParseInt64(ctx.args[2], &version)) {
      ctx.reply->Error(kErrNotInteger);
      co_return;
    }
    from = 3;
  }
  std::string art;
  if (version == 5) {
    int64_t v[3] = {66, 8, 12};
    if (!ArgsOrReply(ctx, from, v, 1, 1000)) co_return;
    v[1] = std::min<int64_t>(v[1], 200);
    v[2] = std::min<int64_t>(v[2], 200);
    art = Schotter(static_cast<int>(v[0]), static_cast<int>(v[1]), static_cast<int>(v[2]));
    art += "\nGeorg Nees - schotter, plotter on paper, 1968. ";
  } else if (version == 6) {
    int64_t v[2] = {80, 20};
    if (!ArgsOrReply(ctx, from, v, 1, 1000)) co_return;
    art = Skyline(static_cast<int>(v[0]), static_cast<int>(v[1]));
    art +=
        "\nDedicated to the 8 bit game developers of past and present.\n"
        "Original 8 bit image from Plaguemon by hikikomori. ";
  }
  art += kVersionLine;
  ctx.reply->Verbatim(art);
}

const CommandSpec kLolwutCommands[] = {
    {"lolwut", -1, kCmdReadOnly | kCmdFast | kCmdHome, 0, 0, 0, &Lolwut, "@read @fast", "server",
     "Displays computer art and the Redis version.", "5.0.0"},
};

}  // namespace

std::span<const CommandSpec> LolwutCommands() { return kLolwutCommands; }

}  // namespace lavik
