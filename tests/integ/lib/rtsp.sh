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
# What gst-launch prints goes to OUT; rtspsrc's own log to OUT.dbg (-q hides
# its warnings, such as "The server closed the connection").
gst_decode() {
	_o=$1 _pr=$2 _u=$3 _n=$4; shift 4
	GST_DEBUG=rtspsrc:5 GST_DEBUG_FILE="$_o.dbg" GST_DEBUG_NO_COLOR=1 \
	timeout 30 gst-launch-1.0 -q rtspsrc location="$_u" protocols="$_pr" latency=0 "$@" ! \
		rtph264depay ! avdec_h264 ! videoconvert ! "video/x-raw,width=$GW,height=$GH" ! \
		fakesink num-buffers="$_n" sync=false >"$_o" 2>&1
}
# gst_ok OUT RC: that decode ended well (status 0, no error or warning).
gst_ok() { [ "$2" = 0 ] && ! grep -qi 'error\|warn' "$1"; }
# gst_why OUT RC: what gst-launch printed and rtspsrc's last steps.
gst_why() {
	printf 'rc=%s: %s rtspsrc: %s' "$2" "$(head -4 "$1" | tr '\n' '|')" \
		"$(grep -E 'PLAY\.\.\.|PAUSE\.\.\.|TEARDOWN\.\.\.|response message|WARN|ERROR' \
			"$1.dbg" 2>/dev/null | tail -6 | sed 's/^.*gstrtspsrc\.c://' | tr '\n' '|')"
}
# gst_after_eos OUT: the decode failed only once it had its frames: rtspsrc
# was pausing or tearing down for gst-launch's end of stream (fakesink's
# num-buffers) and had seen no close from the server. GStreamer 1.22 races
# there: its CLOSE command cancels the connection while the PAUSE request
# is being written, and a write cancelled before its first byte comes back
# as "end-of-file", not "interrupted" (gstrtspconnection.c, writev_bytes),
# which rtspsrc posts as "Could not write to resource".
gst_after_eos() {
	awk '/gst_rtspsrc_pause:.*PAUSE\.\.\.|gst_rtspsrc_close:.*TEARDOWN\.\.\./ && !c { c = NR }
		/ (error|warning): / && !e { e = NR }
		/closed the connection/ { s = 1 }
		END { exit !(c && (!e || c < e) && !s) }' "$1.dbg" 2>/dev/null
}
# gst_check NAME OUT RC PROTO URL FRAMES [props...]: check NAME on the decode
# gst_decode OUT ... made (status RC). Failed after its end of stream only,
# it is decoded once more and judged on that; the first failure is shown.
gst_check() {
	_name=$1 _out=$2 _rc=$3; shift 3
	if gst_ok "$_out" "$_rc"; then
		ok "$_name"
	elif gst_after_eos "$_out"; then
		_first=$(gst_why "$_out" "$_rc")
		gst_decode "$_out.2" "$@"; _rc=$?
		if gst_ok "$_out.2" "$_rc"; then
			ok "$_name" "(second try; the first failed on closing: $_first)"
		else
			fail "$_name" "the first try failed on closing ($_first), the second: $(gst_why "$_out.2" "$_rc")"
		fi
	else
		fail "$_name" "$(gst_why "$_out" "$_rc")"
	fi
}
