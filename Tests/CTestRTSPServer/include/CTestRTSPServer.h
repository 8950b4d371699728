// Test support: the varargs calls of gst-rtsp-server's authentication set-up, which Swift cannot make.
#ifndef CTESTRTSPSERVER_H
#define CTESTRTSPSERVER_H
#include <gst/rtsp-server/rtsp-server.h>

/// Requires HTTP basic authentication with `user`/`password` for every media of `server` made by `factory`.
void bs_test_rtsp_require_basic_auth(GstRTSPServer *server, GstRTSPMediaFactory *factory, const char *user,
                                     const char *password);

/// Remembers, for every media `factory` makes, its element named "stall" (a valve), for bs_test_rtsp_stall_newest.
void bs_test_rtsp_track_valves(GstRTSPMediaFactory *factory);

/// Closes the valve of the newest media: the server keeps the session open and sends nothing more (a stalled
/// camera). Returns 0 when no media was made yet.
int bs_test_rtsp_stall_newest(void);
#endif
