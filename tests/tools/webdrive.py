#!/usr/bin/env python3
"""Drives one browser engine through vcapd's web page for
tests/integ/web_engines.sh and prints `PREFIX.check: OK|FAIL why|SKIP why`.

Engines: chromium (chromedriver), webkit (WebKitWebDriver + MiniBrowser,
needs $DISPLAY) over W3C WebDriver in plain HTTP; firefox over its own
Marionette protocol (Debian 12 has no geckodriver). Standard library only.

usage: webdrive.py ENGINE PAGE_URL PREFIX WORKDIR
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zlib

# --- PNG decoding (screenshots), 8-bit RGB/RGBA, not interlaced ---------------


def png_gray(data):
    """(width, height, [luma per pixel]) of a PNG."""
    assert data[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], 'big')
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            w, h = int.from_bytes(body[0:4], 'big'), int.from_bytes(body[4:8], 'big')
            depth, ctype, inter = body[8], body[9], body[12]
            assert depth == 8 and ctype in (2, 6) and inter == 0, 'PNG kind %d/%d/%d' % (depth, ctype, inter)
            bpp = 3 if ctype == 2 else 4
        elif kind == b'IDAT':
            idat += body
    raw, stride = zlib.decompress(idat), w * bpp
    prev, out, i = bytearray(stride), [], 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend((line[x] * 299 + line[x + 1] * 587 + line[x + 2] * 114) // 1000
                   for x in range(0, stride, bpp))
        prev = line
    return w, h, out


def crop(img, rect):
    """(w, h, luma) of the part of a viewport screenshot at rect (CSS
    pixels, with the viewport's CSS width to scale by)."""
    w, h, px = img
    k = w / rect['vw']
    x0, y0 = int(rect['x'] * k), int(rect['y'] * k)
    x1, y1 = min(w, int((rect['x'] + rect['w']) * k)), min(h, int((rect['y'] + rect['h']) * k))
    return x1 - x0, y1 - y0, [px[y * w + x] for y in range(y0, y1) for x in range(x0, x1)]


# --- clients ------------------------------------------------------------------

ELEM = 'element-6066-11e4-a52e-4f735466cecf'


def free_port():
    s = socket.socket()
    s.bind(('127.0.0.1', 0))
    port = s.getsockname()[1]
    s.close()
    return port


class WebDriver:
    """W3C WebDriver over HTTP (chromedriver, WebKitWebDriver)."""

    def __init__(self, base, caps):
        self.base = base
        self.sid = self._req('POST', '/session', {'capabilities': {'alwaysMatch': caps}})['sessionId']

    def _req(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={'Content-Type': 'application/json'})
        try:
            with urllib.request.urlopen(req, timeout=90) as r:
                return json.load(r)['value']
        except urllib.error.HTTPError as e:
            v = json.load(e).get('value', {})
            raise RuntimeError('%s %s: %s %s' % (method, path, v.get('error'), v.get('message', '')[:300]))

    def cmd(self, method, path, body=None):
        return self._req(method, '/session/' + self.sid + path, body)

    def timeouts(self, ms):
        self.cmd('POST', '/timeouts', {'script': ms, 'pageLoad': ms})

    def navigate(self, url):
        self.cmd('POST', '/url', {'url': url})

    def run(self, script, *args):
        return self.cmd('POST', '/execute/async', {'script': script, 'args': list(args)})

    def find(self, css):
        return self.cmd('POST', '/element', {'using': 'css selector', 'value': css})[ELEM]

    def click(self, eid):
        self.cmd('POST', '/element/%s/click' % eid, {})

    def shot(self):
        return base64.b64decode(self.cmd('GET', '/screenshot'))

    def quit(self):
        try:
            self._req('DELETE', '/session/' + self.sid)
        except Exception:  # the browser may be gone already
            pass


class Marionette:
    """Firefox's Marionette: `LENGTH:JSON` messages over TCP,
    [0, id, command, params] answered by [1, id, error, result]."""

    def __init__(self, port):
        self.sock = socket.create_connection(('127.0.0.1', port), timeout=90)
        self.buf, self.msgid = b'', 0
        self._read()  # {"applicationType": "gecko", "marionetteProtocol": 3}
        self.call('WebDriver:NewSession', {'capabilities': {'alwaysMatch': {'acceptInsecureCerts': True}}})

    def _read(self):
        while b':' not in self.buf:
            self.buf += self._recv()
        n, rest = self.buf.split(b':', 1)
        while len(rest) < int(n):
            rest += self._recv()
        self.buf = rest[int(n):]
        return json.loads(rest[:int(n)])

    def _recv(self):
        b = self.sock.recv(65536)
        if not b:
            raise RuntimeError('marionette closed the connection')
        return b

    def call(self, name, params):
        self.msgid += 1
        msg = json.dumps([0, self.msgid, name, params]).encode()
        self.sock.sendall(b'%d:%s' % (len(msg), msg))
        while True:
            kind, mid, err, res = self._read()
            if kind == 1 and mid == self.msgid:
                break
        if err:
            raise RuntimeError('%s: %s %s' % (name, err.get('error'), err.get('message', '')[:300]))
        return res.get('value') if isinstance(res, dict) and 'value' in res else res

    def timeouts(self, ms):
        self.call('WebDriver:SetTimeouts', {'script': ms, 'pageLoad': ms})

    def navigate(self, url):
        self.call('WebDriver:Navigate', {'url': url})

    def run(self, script, *args):
        return self.call('WebDriver:ExecuteAsyncScript', {'script': script, 'args': list(args)})

    def find(self, css):
        return self.call('WebDriver:FindElement', {'using': 'css selector', 'value': css})[ELEM]

    def click(self, eid):
        self.call('WebDriver:ElementClick', {'id': eid})

    def shot(self):
        return base64.b64decode(self.call('WebDriver:TakeScreenshot', {'full': False, 'hash': False}))

    def quit(self):
        try:
            self.call('Marionette:Quit', {'flags': ['eForceQuit']})
        except Exception:  # it quits while answering
            pass


def wait_http(url, proc, secs):
    for _ in range(int(secs * 10)):
        try:
            urllib.request.urlopen(url, timeout=1).read()
            return True
        except Exception:
            if proc.poll() is not None:
                return False
            time.sleep(0.1)
    return False


# Firefox prefs for a closed network: nothing to update, report or fetch.
FIREFOX_PREFS = {
    'marionette.port': 0, 'app.update.disabledForTesting': True, 'browser.shell.checkDefaultBrowser': False,
    'datareporting.policy.dataSubmissionEnabled': False, 'toolkit.telemetry.enabled': False,
    'browser.safebrowsing.malware.enabled': False, 'browser.safebrowsing.phishing.enabled': False,
    'network.captive-portal-service.enabled': False, 'network.connectivity-service.enabled': False,
    'extensions.update.enabled': False, 'browser.startup.homepage_override.mstone': 'ignore',
    'media.autoplay.default': 0,
    'full-screen-api.transition-duration.enter': '0 0', 'full-screen-api.transition-duration.leave': '0 0',
    'remote.prefs.recommended': True, 'browser.aboutwelcome.enabled': False,
}


def start(engine, work, log):
    """(client, [processes]) for ENGINE, or raise."""
    procs = []
    if engine == 'chromium':
        port = free_port()
        procs.append(subprocess.Popen(['chromedriver', '--port=%d' % port], stdout=log, stderr=log, start_new_session=True))
        if not wait_http('http://127.0.0.1:%d/status' % port, procs[0], 15):
            raise RuntimeError('chromedriver did not answer')
        args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--autoplay-policy=no-user-gesture-required', '--window-size=1280,1000',
                '--user-data-dir=' + os.path.join(work, 'chromium')]
        caps = {'browserName': 'chrome',
                'goog:chromeOptions': {'binary': shutil.which('chromium'), 'args': args}}
        return WebDriver('http://127.0.0.1:%d' % port, caps), procs
    if engine == 'webkit':
        port = free_port()
        procs.append(subprocess.Popen(['WebKitWebDriver', '--port=%d' % port], stdout=log, stderr=log, start_new_session=True))
        if not wait_http('http://127.0.0.1:%d/status' % port, procs[0], 15):
            raise RuntimeError('WebKitWebDriver did not answer')
        caps = {'browserName': 'MiniBrowser', 'webkitgtk:browserOptions': {
            'binary': MINIBROWSER, 'args': ['--automation', '--geometry=1280x1000']}}
        return WebDriver('http://127.0.0.1:%d' % port, caps), procs
    prof = os.path.join(work, 'firefox')
    os.makedirs(prof, exist_ok=True)
    with open(os.path.join(prof, 'user.js'), 'w') as f:
        for k, v in FIREFOX_PREFS.items():
            f.write('user_pref(%s, %s);\n' % (json.dumps(k), json.dumps(v)))
    procs.append(subprocess.Popen(['firefox-esr', '--headless', '--marionette', '--no-remote',
                                   '--width=1280', '--height=1000', '--profile', prof],
                                  stdout=log, stderr=log, start_new_session=True))
    portfile = os.path.join(prof, 'MarionetteActivePort')
    for _ in range(300):
        if os.path.exists(portfile) and open(portfile).read().strip():
            return Marionette(int(open(portfile).read())), procs
        if procs[0].poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError('firefox wrote no MarionetteActivePort')


MINIBROWSER = '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser'
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    engine, url, prefix, work = sys.argv[1:5]
    # timeout(1) stops this with SIGTERM: a FAIL line, the browser stopped
    def stopped(*_):
        raise RuntimeError('stopped by SIGTERM (timeout)')
    signal.signal(signal.SIGTERM, stopped)
    res = []

    def check(name, cond, why):
        verbose = ' (%s)' % why if os.environ.get('VERBOSE') else ''
        res.append('%s.%s: %s' % (prefix, name, 'OK' + verbose if cond else 'FAIL ' + why))
    def note(name, h):  # what the engine has, for a verbose run
        if os.environ.get('VERBOSE'):
            res.append('# %s.%s %s' % (prefix, name, json.dumps(h.get('mse'))))
    # the page drivers' helpers (sleep, until...) first, then the steps
    with open(os.path.join(HERE, '..', 'integ', 'lib', 'drive.js')) as f:
        page_js = f.read()
    with open(os.path.join(HERE, 'webdrive_page.js')) as f:
        page_js += f.read()
    log = open(os.path.join(work, engine + '.log'), 'w')

    def step(name):
        r = b.run(page_js, name)
        if not isinstance(r, dict) or 'exception' in r:
            raise RuntimeError('step %s: %s' % (name, json.dumps(r)))
        return r
    procs, b = [], None
    try:
        b, procs = start(engine, work, log)
        b.timeouts(60000)
        b.navigate(url + '/')
        # step: (name, args) run by webdrive_page.js in the page
        live = step('live')
        check('mjpeg_in_img', all(c.get('live') == 'mjpeg' and c.get('natural', 0) > 0 for c in live['cams']) and
              len(live['cams']) == 2, json.dumps(live))
        # two screenshots of the live view 2 s apart (the page's own, not
        # a canvas): differ, and are not blank
        # of the viewport, cropped here: WebKitGTK's element screenshots
        # came out of the wrong place or half painted
        rect = step('rect')
        shots = [b.shot()]
        time.sleep(2)
        shots.append(b.shot())
        if os.environ.get('WEBDRIVE_SHOTS'):  # to look at them
            for n, png in zip('ab', shots):
                with open(os.path.join(os.environ['WEBDRIVE_SHOTS'], '%s-%s.png' % (engine, n)), 'wb') as f:
                    f.write(png)
        a, c = crop(png_gray(shots[0]), rect), crop(png_gray(shots[1]), rect)
        diff = sum(abs(x - y) > 16 for x, y in zip(a[2], c[2])) if a[:2] == c[:2] else -1
        check('shots_differ', diff > len(a[2]) // 1000,
              '%d of %d pixels differ in two screenshots 2 s apart (%dx%d, %dx%d)' %
              (diff, len(a[2]), a[0], a[1], c[0], c[1]))
        check('shot_not_blank', max(c[2]) - min(c[2]) > 100, 'luma %d..%d' % (min(c[2]), max(c[2])))
        st = step('still_mjpeg')
        check('still_mjpeg_after_4s', st['live'] == 'mjpeg' and '(MJPEG stream)' in st['stats'], json.dumps(st))
        menu = step('formats')
        check('formats_grouped', menu['common'] == ['MJPEG', 'JPEG', 'YUYV', 'NV12', 'YUV420', 'RGB24'] or
              menu['common'] == ['MJPEG', 'H264', 'JPEG', 'YUYV', 'NV12', 'YUV420', 'RGB24'], json.dumps(menu))
        check('formats_more', menu['more_group'] == 'More formats' and menu['more_n'] >= 70 and
              menu['api_missing'] == [] and menu['unticked_n'] <= 7, json.dumps(menu))
        pick = step('picker')
        check('picker_size', pick.get('natural') == '160x120' and pick.get('src') == '/stream?cam=0&size=160x120'
              and pick.get('live') == 'mjpeg', json.dumps(pick))
        # fullscreen: a real click (a user gesture for the engine)
        b.click(b.find('[data-cam="0"] button.fullscreen'))
        fs = step('fullscreen')
        check('fullscreen', fs.get('in') == 'view' and fs.get('out') == 'none', json.dumps(fs))
        lay = step('layout')
        check('grid_1280', lay.get('wide') == 'side by side', json.dumps(lay))
        check('one_at_390', lay.get('narrow') == 'cam 0 only, tabs 2' and lay.get('switched') == 'cam 1 only' and
              lay.get('narrow_scroll_width', 999) <= 390 and 0 < lay.get('narrow_card_width', 0) <= 390 and
              lay.get('narrow_srcs') == 'none,/stream' and lay.get('wide_srcs') == '/stream,/stream',
              json.dumps(lay))
        h = step('h264')
        note('mse', h)

        def plays(h):
            return h.get('live') == 'h264' and h.get('advanced', 0) > 0.5 and h.get('size') == '320x240'
        if h.get('offered') and not plays(h):
            # measured once more on a fresh page: WebKitGTK's decoder once
            # failed the first append (error 4) while the host was so loaded
            # that capture ran at 12.7 of 30 fps; a page that cannot play
            # H.264 fails both tries
            res.append('# %s.h264 first try: %s' % (prefix, json.dumps(h)))
            b.navigate(url + '/')
            h = step('h264')
        if h.get('offered'):
            check('h264_plays', plays(h), json.dumps(h))
            if plays(h):
                # a player that stands still after playing gets a new stream
                st = step('stall')
                check('h264_stall_restarts', st.get('restarts', 0) >= 1 and st.get('after') == 'played' and
                      st.get('live') == 'h264', json.dumps(st))
        elif any(h.get('mse', {}).values()):
            check('h264_plays', False, 'the engine takes avc1 but the page offers no H.264: ' + json.dumps(h))
        else:
            res.append('%s.h264_plays: SKIP no MediaSource taking avc1 in %s: %s' % (prefix, engine, json.dumps(h)))
        # what the page shows when MediaSource is missing (an iPhone has only
        # ManagedMediaSource): mms.html / nomse.html are index.html with
        # window.MediaSource (and ManagedMediaSource) removed first
        for pagename in ('mms', 'nomse'):
            b.navigate(url + '/' + pagename + '.html')
            h = step('h264')
            note(pagename + '_mse', h)
            if pagename == 'nomse' and h.get('offered'):
                # neither: only an engine saying it plays HLS itself offers
                # H.264, through /stream.m3u8 (issue 24); one that says so
                # and cannot (Chromium without MediaSource: error 4) falls
                # back to MJPEG, saying why
                check('nomse_hls', (h.get('how') == 'H.264 via HLS' and plays(h)) or
                      (h.get('live') == 'mjpeg' and 'did not play' in h.get('answer', '')), json.dumps(h))
            elif pagename == 'nomse':
                check('nomse_no_h264', h.get('live') == 'mjpeg', json.dumps(h))
            elif h.get('mse', {}).get('ManagedMediaSource'):
                check('mms_plays', h.get('live') == 'h264' and h.get('how') == 'H.264 via ManagedMediaSource' and
                      h.get('advanced', 0) > 0.5, json.dumps(h))
            else:
                res.append('%s.mms_plays: SKIP no ManagedMediaSource taking avc1 in %s' % (prefix, engine))
    except Exception as e:  # one line, not a trace: the test's output stays readable
        res.append('%s.driver: FAIL %s: %s' % (prefix, type(e).__name__, str(e)[:400]))
    finally:
        if b:
            b.quit()
        # each driver or browser leads a process group of its own (the
        # browser a driver started, a browser's content processes): the
        # ones left after the session ended are stopped with it
        for p in procs:
            if engine == 'firefox':
                try:
                    p.wait(10)  # Marionette:Quit
                except subprocess.TimeoutExpired:
                    pass
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    p.wait(5)
                    break
                except subprocess.TimeoutExpired:
                    pass
    print('\n'.join(res))


if __name__ == '__main__':
    main()
