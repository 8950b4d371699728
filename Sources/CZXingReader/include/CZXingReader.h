// A plain C face over zxing-cpp's ReadBarcodes (C++), the second decoding engine. Swift calls only this.
#ifndef CZXINGREADER_H
#define CZXINGREADER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// zxing-cpp's BarcodeFormat bits (1.4): the caller chooses formats with these.
enum {
    BS_ZX_AZTEC = 1 << 0, BS_ZX_CODABAR = 1 << 1, BS_ZX_CODE39 = 1 << 2, BS_ZX_CODE93 = 1 << 3,
    BS_ZX_CODE128 = 1 << 4, BS_ZX_DATABAR = 1 << 5, BS_ZX_DATABAR_EXPANDED = 1 << 6, BS_ZX_DATAMATRIX = 1 << 7,
    BS_ZX_EAN8 = 1 << 8, BS_ZX_EAN13 = 1 << 9, BS_ZX_ITF = 1 << 10, BS_ZX_MAXICODE = 1 << 11,
    BS_ZX_PDF417 = 1 << 12, BS_ZX_QRCODE = 1 << 13, BS_ZX_UPCA = 1 << 14, BS_ZX_UPCE = 1 << 15,
    BS_ZX_MICROQR = 1 << 16,
};

/// zxing-cpp's ContentType: what the bytes are.
enum { BS_ZX_TEXT = 0, BS_ZX_BINARY = 1, BS_ZX_MIXED = 2, BS_ZX_GS1 = 3, BS_ZX_ISO15434 = 4, BS_ZX_UNKNOWN_ECI = 5 };

/// One code read. `text`, `bytes` and `sequence_id` are malloc'd and freed by bs_zx_free.
typedef struct bs_zx_result {
    uint32_t format;        // one BS_ZX_* format bit
    int content_type;       // BS_ZX_TEXT ...
    int has_eci;
    char *text;             // UTF-8, the character set resolved (ECI, Shift-JIS guess ...)
    uint8_t *bytes;         // the raw payload bytes
    int length;
    int line_count;         // 1D: scan lines that agreed
    double corners[8];      // x,y of top-left, top-right, bottom-right, bottom-left in image pixels
    int sequence_index;     // structured append: this symbol's 0-based position, -1 when not part of one
    int sequence_size;      // the number of symbols (0: not stated, PDF417), -1 when not part of one
    char *sequence_id;      // what ties the parts together (QR: the parity byte in decimal), malloc'd; may be ""
} bs_zx_result;

/// Reads the codes in one 8-bit luma image (not copied; `stride` bytes a row).
/// `try_harder` also tries rotations, inverted images and downscaling; slower, for stills.
/// Returns the count written to `out` (at most `capacity`), -1 when zxing-cpp threw, -2 when one of its internal
/// assertions failed (the image is given up; the process goes on).
int bs_zx_read(const uint8_t *luma, int width, int height, int stride, uint32_t formats, int try_harder,
               bs_zx_result *out, int capacity);

/// Frees what bs_zx_read allocated in `results[0..<count]`.
void bs_zx_free(bs_zx_result *results, int count);

/// Encodes `text` (UTF-8) as one 1D symbol of `format` (one BS_ZX_* bit) with zxing-cpp's writer, no quiet zone:
/// `modules[i]` is 1 for a dark module, 0 for a light one. Test media only (the demo's symbols).
/// Returns the module count (at most `capacity` written), or -1 when the writer refused the text.
int bs_zx_encode_linear(uint32_t format, const char *text, uint8_t *modules, int capacity);

#ifdef __cplusplus
}
#endif

#endif
