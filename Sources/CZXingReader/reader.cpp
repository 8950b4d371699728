// The C face of zxing-cpp for Swift: one call that reads a luma view, results copied into plain C structs.
#include "CZXingReader.h"

// text() as UTF-8 std::string (zxing-cpp 1.4 otherwise returns std::wstring and warns).
#define ZX_USE_UTF8 1
#include <ZXing/ReadBarcode.h>

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

char *copyString(const std::string &s) {
    char *out = static_cast<char *>(std::malloc(s.size() + 1));
    if (out) std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

} // namespace

// Debian's zxing-cpp 1.4 is built with assertions on, and some of them fail on real images (the library's own
// bugs, fixed upstream after 1.4). An assertion must not take the whole scanner down: our __assert_fail below
// (the executable's definition wins over libc's for libZXing's calls) jumps back to bs_zx_read when the failing
// assertion happened inside it on this thread; the image is then given up. What that call had allocated leaks.
static thread_local sigjmp_buf *escape = nullptr;

extern "C" void __assert_fail(const char *assertion, const char *file, unsigned int line,
                              const char *function) noexcept {
    if (sigjmp_buf *target = escape) {
        escape = nullptr;
        siglongjmp(*target, 1);
    }
    std::fprintf(stderr, "%s:%u: %s: Assertion `%s' failed.\n", file, line, function, assertion);
    std::abort();
}

static int readInto(const uint8_t *luma, int width, int height, int stride, uint32_t formats, int try_harder,
                    bs_zx_result *out, int capacity);

extern "C" int bs_zx_read(const uint8_t *luma, int width, int height, int stride, uint32_t formats, int try_harder,
                          bs_zx_result *out, int capacity) {
    // No C++ object lives in this frame, so the jump back skips no destructor of ours.
    sigjmp_buf target;
    if (sigsetjmp(target, 0) != 0) return -2;
    escape = &target;
    int n = readInto(luma, width, height, stride, formats, try_harder, out, capacity);
    escape = nullptr;
    return n;
}

static int readInto(const uint8_t *luma, int width, int height, int stride, uint32_t formats, int try_harder,
                    bs_zx_result *out, int capacity) {
    try {
        ZXing::ImageView view(luma, width, height, ZXing::ImageFormat::Lum, stride);
        ZXing::DecodeHints hints;
        hints.setFormats(ZXing::BarcodeFormats(static_cast<ZXing::BarcodeFormat>(formats)));
        hints.setTryHarder(try_harder != 0);
        hints.setTryRotate(try_harder != 0);
        // Never zxing-cpp's own downscaling: in 1.4 it merges results across scales with an operator== that
        // asserts (zxing-cpp issues 516, 740). The second passes downscale instead.
        hints.setTryDownscale(false);
        // Codabar and Code 39 check characters stay in the text, as ZBar reports them; so do Codabar's start and
        // stop characters (A9876543210B, as ZBar and zbarimg print it).
        hints.setReturnCodabarStartEnd(true);
        auto results = ZXing::ReadBarcodes(view, hints);
        int n = 0;
        for (const auto &r : results) {
            if (n >= capacity) break;
            if (!r.isValid()) continue;
            bs_zx_result &o = out[n];
            o.format = static_cast<uint32_t>(r.format());
            o.content_type = static_cast<int>(r.contentType());
            o.has_eci = r.hasECI() ? 1 : 0;
            o.text = copyString(r.text());
            const auto &bytes = r.bytes();
            o.length = static_cast<int>(bytes.size());
            o.bytes = static_cast<uint8_t *>(std::malloc(bytes.size() ? bytes.size() : 1));
            if (o.bytes && !bytes.empty()) std::memcpy(o.bytes, bytes.data(), bytes.size());
            o.line_count = r.lineCount();
            const auto &p = r.position();
            for (int i = 0; i < 4; ++i) {
                o.corners[2 * i] = p[i].x;
                o.corners[2 * i + 1] = p[i].y;
            }
            o.sequence_index = r.isPartOfSequence() ? r.sequenceIndex() : -1;
            o.sequence_size = r.isPartOfSequence() ? r.sequenceSize() : -1;
            o.sequence_id = copyString(r.sequenceId());
            ++n;
        }
        return n;
    } catch (...) {
        return -1;
    }
}

extern "C" void bs_zx_free(bs_zx_result *results, int count) {
    for (int i = 0; i < count; ++i) {
        std::free(results[i].text);
        std::free(results[i].bytes);
        std::free(results[i].sequence_id);
        results[i].text = nullptr;
        results[i].bytes = nullptr;
        results[i].sequence_id = nullptr;
    }
}
