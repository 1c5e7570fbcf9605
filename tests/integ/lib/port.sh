# The port a daemon picked (sourced by lib/common.sh and by tests that
# keep their own temp dir and output, such as ops_systemd).

# logged_port LOG PID: the port a daemon listening on 127.0.0.1:0 (flag or
# config) picked, once it answers there (5 s); fails when PID exits first.
logged_port() {
	for _i in $(seq 50); do
		_p=$(sed -n 's/.*listening on 127\.0\.0\.1:0 (port \([0-9]*\)).*/\1/p' "$1" | head -1)
		[ -n "$_p" ] && { curl -s -o /dev/null "http://127.0.0.1:$_p/api/status" ||
			curl -sk -o /dev/null "https://127.0.0.1:$_p/api/status"; } && { echo "$_p"; return 0; }
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	return 1
}
