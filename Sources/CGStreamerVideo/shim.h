#include <gst/video/video.h>
