"""An RTSP server on loopback that serves an H.264 elementary stream (.h264, Annex B, no B-frames) as a live
stream, each client its own session from the clip's start, the clip played again and again (for scripts/bench streams). gst-rtsp-server through
PyGObject (Debian's python3-gi and gir1.2-gst-rtsp-server-1.0): the stream is parsed and payloaded, never
re-encoded, so the server costs little beside the streams it feeds.

    /usr/bin/python3 scripts/rtsp_clip_server.py CLIP.h264 PORT     → rtsp://127.0.0.1:PORT/clip
PORT 0: a free port, the one printed.
"""
import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

clip, port = sys.argv[1], sys.argv[2]
Gst.init(None)


class Looping(GstRtspServer.RTSPMediaFactory):
    """Each client's media: the clip's H.264 elementary stream (Annex B), read again from the start at its end
    (multifilesrc loop=true), paced by the parser's timestamps from the stream's own frame rate."""

    def do_create_element(self, url):
        return Gst.parse_launch(
            f"multifilesrc location={clip} loop=true caps=video/x-h264,stream-format=byte-stream,alignment=au "
            "! h264parse ! video/x-h264,stream-format=byte-stream,alignment=au ! rtph264pay name=pay0 pt=96 "
            "config-interval=-1")


server = GstRtspServer.RTSPServer()
server.set_address("127.0.0.1")
server.set_service(port)
factory = Looping()
factory.set_shared(False)
server.get_mount_points().add_factory("/clip", factory)
server.attach(None)
print(f"rtsp://127.0.0.1:{server.get_bound_port()}/clip", flush=True)
GLib.MainLoop().run()
