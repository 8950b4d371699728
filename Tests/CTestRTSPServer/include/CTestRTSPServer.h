// Test support: the varargs calls of gst-rtsp-server's authentication set-up, which Swift cannot make.
#ifndef CTESTRTSPSERVER_H
#define CTESTRTSPSERVER_H
#include <gst/rtsp-server/rtsp-server.h>

/// Requires HTTP basic authentication with `user`/`password` for every media of `server` made by `factory`.
void bs_test_rtsp_require_basic_auth(GstRTSPServer *server, GstRTSPMediaFactory *factory, const char *user,
                                     const char *password);
#endif
