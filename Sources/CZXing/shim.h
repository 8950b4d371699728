// zxing-cpp is C++: Swift never imports it. This module only carries pkg-config's flags and the link to libZXing
// for the C++ target CZXingReader, which gives Swift a plain C interface. The header below is plain macros.
#include <ZXing/ZXVersion.h>
