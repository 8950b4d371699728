// zxing-cpp's 1D writers for the demo's test symbols (the symbologies the project draws no encoder of its own for).
#include "CZXingReader.h"

#define ZX_USE_UTF8 1
#include <ZXing/BitMatrix.h>
#include <ZXing/MultiFormatWriter.h>

extern "C" int bs_zx_encode_linear(uint32_t format, const char *text, uint8_t *modules, int capacity) {
    try {
        ZXing::MultiFormatWriter writer(static_cast<ZXing::BarcodeFormat>(format));
        writer.setMargin(0);
        // Width 0: one pixel a module, the symbol's own width; one row is the whole 1D pattern.
        ZXing::BitMatrix matrix = writer.encode(std::string(text), 0, 1);
        int n = matrix.width();
        for (int x = 0; x < n && x < capacity; ++x) modules[x] = matrix.get(x, 0) ? 1 : 0;
        return n;
    } catch (...) {
        return -1;
    }
}
