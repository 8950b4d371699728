// libsoup 3: the HTTP server of `barscope serve`, on the GLib main loop GStreamer already uses.
#include <libsoup/soup.h>
