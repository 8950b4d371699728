// Eclipse libmosquitto: MQTT 3.1.1 publishing of events (`--publish mqtt://...`).
#include <mosquitto.h>
