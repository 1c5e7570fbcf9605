# Sourced by the guest side of tests/vm/boot_uvc.sh and bench_uvc.sh, which
# replace the camera vivid-vm --uvc plugged in by another uvcdev (other
# formats, the quirks patch). dummy_hcd has one port: the first must go
# before the next is started.

# uvc_unplug: ends vivid-vm's uvcdev, waits (20 s at most) for its node to go
uvc_unplug() {
	kill "$UVC_PID"
	for _i in $(seq 100); do [ -e "$UVC_DEV" ] || break; sleep 0.2; done
}

# uvc_node: the capture node of the camera plugged in now (the uvcvideo
# interface with index 0; the metadata node is 1), waited for 30 s at most;
# empty when none came
uvc_node() {
	_node=
	for _i in $(seq 150); do
		for _v in /sys/bus/usb/drivers/uvcvideo/*/video4linux/video*; do
			[ "$(cat "$_v/index" 2>/dev/null)" = 0 ] && _node=/dev/${_v##*/}
		done
		[ -n "$_node" ] && [ -e "$_node" ] && break
		sleep 0.2
	done
	echo "$_node"
}
