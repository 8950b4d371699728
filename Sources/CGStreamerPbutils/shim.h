#include <gst/pbutils/pbutils.h>
