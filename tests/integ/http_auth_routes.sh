#!/bin/sh
# Auth decided by the route table (issue 21). Generated part: for every row
# `vcapd --routes` prints (so a route added later is covered without
# editing this file) and every auth mode (none, basic, token, basic+token,
# auth_view alone with auth_control unset), requests without, with wrong and
# with right credentials get the answer the row's class documents: 401 where
# the mode protects the class, else no auth refusal. Hand-written part: the
# URLs that exist today, H.264 ones first, and their encoded, doubled-slash,
# case-varied and HEAD forms, none of which may serve anything without
# credentials. Each daemon listens on a port it picks itself (127.0.0.1:0).
cd "$(dirname "$0")/../.." || exit 2
T=http_auth_routes
. tests/integ/lib/common.sh
PW=route-pw
CAM=c0
SECRET=0123456789abcdef-routes

if ! command -v openssl >/dev/null; then
	skip setup "openssl missing (DEPS_TEST)"; exit 0
fi
HASH=$(openssl passwd -6 "$PW")

"$VCAPD" --routes >"$TMP/routes" 2>"$TMP/routes.err"; rc=$?
grep -v '^#' "$TMP/routes" >"$TMP/rows"
nrows=$(grep -c . "$TMP/rows")
[ "$rc" = 0 ] && [ "$nrows" -ge 1 ] && grep -q '^GET /stream.mp4 exact - view$' "$TMP/rows" &&
	! awk '$5 !~ /^(view|status|control|public)$/ { bad = 1 } END { exit !bad }' "$TMP/rows"
check routes_listed $? "rc=$rc, $nrows rows: $(tr '\n' ';' <"$TMP/rows") $(cat "$TMP/routes.err")"

# start_mode NAME CONFIG-LINES: the daemon with one test camera and these
# [server] lines; sets U.
start_mode() {
	printf '[server]\nuser = admin:%s\ntoken_secret = %s\n%s\n[camera %s]\ndevice = test:320x240@10\n' \
		"$HASH" "$SECRET" "$2" "$CAM" >"$TMP/$1.conf"
	start_vcapd_any --config "$TMP/$1.conf" || return 1
	U="http://127.0.0.1:$VPORT"
}

# req OUT METHOD URL ARGS...: the status code of one request into OUT ("000"
# when no answer came). Only the first body byte is read (head closes the
# pipe), so a stream costs one frame, not --max-time.
req() {
	_out=$1 _m=$2 _u=$3; shift 3
	case $_m in
	GET) set -- "$@" ;;
	HEAD) set -- -I "$@" ;;
	*) set -- -X "$_m" -H 'Content-Type: application/json' --data '{}' "$@" ;;
	esac
	curl -s --path-as-is -D "$_out.h" --max-time 4 "$@" "$_u" 2>/dev/null | head -c 1 >/dev/null
	_c=$(status "$_out.h" 2>/dev/null)
	echo "${_c:-000}" >"$_out"
}

# row_url PATH MATCH ARG [QUERY]: a URL the row takes (prefix rows get the
# camera's id after them, a row needing an argument gets it).
row_url() {
	_p=$1
	[ "$2" = prefix ] && _p="$_p$CAM"
	_q=""
	[ "$3" != - ] && _q="$3=x"
	[ -n "$4" ] && _q="${_q:+$_q&}$4"
	echo "$U$_p${_q:+?$_q}"
}

# Whether MODE asks for credentials for CLASS (README, Security): 1 or 0.
protected() {
	case $1:$2 in
	*:public | none:*) echo 0 ;;
	viewonly:status) echo 0 ;;    # auth_status unset
	*) echo 1 ;;                  # viewonly:control = union of view and status
	esac
}

# Whether MODE accepts the credentials of VARIANT: 1 or 0.
accepted() {
	case $1:$2 in
	basic:rightpw | viewonly:rightpw | token:righttoken | basictoken:right*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# run_variant MODE VARIANT QUERY CURL-ARGS...: every row at once with these
# credentials; one result line for the variant. A row whose class the mode
# protects wants 401 unless the mode accepts the credentials; every other
# row wants an answer that is no auth refusal (not 401/403/429, not 1xx/5xx,
# not silence).
run_variant() {
	_mode=$1 _var=$2 _query=$3; shift 3
	_i=0 _jobs=""
	: >"$TMP/jobs"
	while read -r m p match arg cls; do
		_i=$((_i + 1))
		req "$TMP/r$_i" "$m" "$(row_url "$p" "$match" "$arg" "$_query")" "$@" &
		_jobs="$_jobs $!"
		echo "$_i $m $p $match $arg $cls" >>"$TMP/jobs"
		if [ "$m" = GET ] && [ "$_var" = none ]; then # HEAD takes the GET row
			_i=$((_i + 1))
			req "$TMP/r$_i" HEAD "$(row_url "$p" "$match" "$arg" "$_query")" "$@" &
			_jobs="$_jobs $!"
			echo "$_i HEAD $p $match $arg $cls" >>"$TMP/jobs"
		fi
	done <"$TMP/rows"
	for j in $_jobs; do wait "$j"; done # not the daemon, also a child
	_bad="" _all=""
	while read -r n m p match arg cls; do
		c=$(cat "$TMP/r$n")
		_lbl="$m:$p"
		[ "$match" = prefix ] && _lbl="$_lbl*"
		[ "$arg" != - ] && _lbl="$_lbl?$arg"
		_all="$_all $_lbl=$c"
		if [ "$(protected "$_mode" "$cls")" = 1 ] && [ "$(accepted "$_mode" "$_var")" = 0 ]; then
			want=401
			[ "$c" = 401 ] || _bad="$_bad $_lbl($cls)=$c"
		else
			want=ok
			case $c in 000 | 401 | 403 | 429 | [015]*) _bad="$_bad $_lbl($cls)=$c" ;; esac
		fi
	done <"$TMP/jobs"
	[ -z "$_bad" ]; check "$_mode.$_var" $? "${_bad:+want 401 where $_mode protects the class, else an answer that is no auth refusal:$_bad; }all:$_all"
}

TOKEN=""
WTOKEN=""
# mode NAME CONFIG-LINES VARIANTS...: one daemon, the variants in turn:
# none (no credentials), wrongpw, rightpw, wrongtoken (one character
# changed), righttoken (scope view,status,control).
mode() {
	_name=$1 _conf=$2; shift 2
	if ! start_mode "$_name" "$_conf"; then
		fail "$_name.start" "vcapd did not start"; return
	fi
	TOKEN=$("$VCAPD" --config "$TMP/$_name.conf" --make-token view,status,control:600)
	WTOKEN="$(echo "$TOKEN" | cut -c1-20)x$(echo "$TOKEN" | cut -c22-)"
	# one hash each first: the parallel requests then hit the verified and
	# failed caches instead of the hash budget and the failed-login back-off
	curl -s -o /dev/null --max-time 10 -u "admin:wrong" "$U/snapshot"
	curl -s -o /dev/null --max-time 10 -u "admin:$PW" "$U/snapshot"
	for v in "$@"; do
		case $v in
		none) run_variant "$_name" none "" ;;
		wrongpw) run_variant "$_name" wrongpw "" -u "admin:wrong" ;;
		rightpw) run_variant "$_name" rightpw "" -u "admin:$PW" ;;
		wrongtoken) run_variant "$_name" wrongtoken "token=$WTOKEN" ;;
		righttoken) run_variant "$_name" righttoken "token=$TOKEN" ;;
		esac
	done
	if [ "$_name" = basic ]; then
		by_hand
	fi
	stop_vcapd
}

# The URLs of today by hand (basic mode), as a second check on the table.
by_hand() {
	code() { curl -s --path-as-is -o /dev/null -w '%{http_code}' --max-time 3 "$@" 2>/dev/null | head -c 3; }
	bad=""
	for u in /stream.mp4 /stream.h264 "/stream?format=h264" /stream /snapshot /raw /raw/stream \
		/api/status /metrics /api/try /api/cams "/api/cams/$CAM/controls" "/?action=stream" \
		"/?action=snapshot" "/?action=snapshot_0" /state "/stream%2Emp4" "/%73tream.mp4" \
		"/stream%2eh264" "/stream.mp4?cam=$CAM&size=160x120"; do
		c=$(code "$U$u"); [ "$c" = 401 ] || bad="$bad GET $u=$c"
	done
	for u in /stream.mp4 /stream.h264 /snapshot /api/status; do
		c=$(code -I "$U$u"); [ "$c" = 401 ] || bad="$bad HEAD $u=$c"
	done
	c=$(code -X PUT -H 'Content-Type: application/json' --data '{"brightness":1}' \
		"$U/api/cams/$CAM/controls"); [ "$c" = 401 ] || bad="$bad PUT controls=$c"
	[ -z "$bad" ]; check hand_no_credentials_401 $? "want 401:$bad"

	# forms that are no route's: 404 (the page's files) or 405, never 2xx
	bad=""
	for u in //stream.mp4 /STREAM.MP4 /Stream.h264 /stream.mp4/ /./stream.mp4 /x/../stream.mp4 \
		"/cam/$CAM/stream.mp4" "/cam/$CAM/snapshot" /stream.mp4.x /streams "/%2Fstream.mp4"; do
		c=$(code "$U$u"); [ "$c" = 404 ] || bad="$bad GET $u=$c"
	done
	c=$(code --request-target "http://127.0.0.1/stream.mp4" "$U/"); [ "$c" = 404 ] || bad="$bad absolute-form=$c"
	for m in POST PUT DELETE; do
		c=$(code -X "$m" "$U/stream.mp4"); [ "$c" = 405 ] || bad="$bad $m /stream.mp4=$c"
	done
	[ -z "$bad" ]; check hand_variants_not_served $? "want 404/405:$bad"

	curl -s -D "$TMP/h401" -o /dev/null --max-time 3 "$U/stream.mp4"
	hdr "$TMP/h401" WWW-Authenticate | grep -q '^Basic realm='
	check hand_mp4_www_authenticate $? "$(tr -d '\r' <"$TMP/h401" | tr '\n' ' ')"

	bad=""
	for u in /stream.mp4 /stream.h264 "/stream?format=h264" /stream /snapshot /raw /raw/stream \
		/api/status /metrics /api/try "/?action=stream" "/?action=snapshot" /state "/stream%2Emp4"; do
		c=$(curl -s -D "$TMP/hr" --max-time 4 -u "admin:$PW" "$U$u" 2>/dev/null | head -c 1 | wc -c)
		s=$(status "$TMP/hr"); [ "$s" = 200 ] && [ "$c" = 1 ] || bad="$bad $u=$s/${c}B"
	done
	c=$(code -u "admin:$PW" -X PUT -H 'Content-Type: application/json' --data '{}' \
		"$U/api/cams/$CAM/controls"); case $c in 2*) ;; *) bad="$bad PUT controls=$c" ;; esac
	[ -z "$bad" ]; check hand_right_credentials_served $? "want 200 with a body:$bad"

	bad=""
	for u in / /index.html /app.js; do
		c=$(code "$U$u"); [ "$c" = 200 ] || bad="$bad $u=$c"
	done
	[ -z "$bad" ]; check hand_page_open $? "want 200:$bad"
}

mode none "" none wrongpw rightpw wrongtoken
mode basic "auth_view = basic
auth_status = basic
auth_control = basic" none wrongpw rightpw wrongtoken righttoken
mode token "auth_view = token
auth_status = token
auth_control = token" none wrongpw rightpw wrongtoken righttoken
mode basictoken "auth_view = basic,token
auth_status = basic,token
auth_control = basic,token" none wrongpw wrongtoken rightpw righttoken
mode viewonly "auth_view = basic" none wrongpw rightpw righttoken
