# RTSP helpers (sourced after common.sh).
# rtsp_port LOG: the RTSP port the daemon logged ("rtsp: listening on ... (port N)").
rtsp_port() {
	for _i in $(seq 50); do
		_p=$(sed -n 's/.*rtsp: listening on .* (port \([0-9]*\)).*/\1/p' "$1" | head -1)
		[ -n "$_p" ] && { echo "$_p"; return 0; }
		sleep 0.1
	done
	return 1
}
# have_gst: GStreamer's RTSP source, depayloader and decoder are installed.
have_gst() {
	command -v gst-launch-1.0 >/dev/null && gst-inspect-1.0 rtspsrc >/dev/null 2>&1 &&
		gst-inspect-1.0 avdec_h264 >/dev/null 2>&1
}
# ff_decode OUT TRANSPORT URL SECONDS: ffmpeg decodes the stream into OUT
# (framecrc lines, errors in OUT.err); returns ffmpeg's status.
ff_decode() {
	timeout $(($4 + 15)) ffmpeg -nostdin -v error -rtsp_transport "$2" -i "$3" -t "$4" \
		-f framecrc - >"$1" 2>"$1.err"
}
# ff_frames OUT: frames decoded; ff_size URL TRANSPORT: WxH ffprobe reports.
ff_frames() { grep -vc '^#' "$1"; }
ff_size() {
	timeout 15 ffprobe -v error -rtsp_transport "$2" -select_streams v:0 \
		-show_entries stream=width,height -of csv=s=x:p=0 "$1" 2>/dev/null
}
# gst_decode OUT PROTO URL FRAMES [rtspsrc properties...]: GStreamer decodes
# FRAMES frames of WxH (caps after the decoder: a size mismatch fails).
gst_decode() {
	_o=$1 _pr=$2 _u=$3 _n=$4; shift 4
	timeout 30 gst-launch-1.0 -q rtspsrc location="$_u" protocols="$_pr" latency=0 "$@" ! \
		rtph264depay ! avdec_h264 ! videoconvert ! "video/x-raw,width=$GW,height=$GH" ! \
		fakesink num-buffers="$_n" sync=false >"$_o" 2>&1
}
