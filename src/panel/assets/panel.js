// shellgate panel: live updates and in-place buttons.
//
// The page works without this script: its forms post and come back to the page, and a reload
// shows the current state. With it, the live part of the page is fetched again whenever the
// server's event stream says the session's log changed, and the buttons act without leaving the
// page. The HTML it swaps in is rendered by the server, which escapes every string from the log.
'use strict';

(function () {
  const main = document.getElementById('main');
  if (!main || !main.dataset.live) {
    return;
  }
  // Three places to speak, so each announcement is heard once: the connection state (changes
  // rarely), the result of the person's last action, and errors.
  const status = document.getElementById('live-status');
  const done = document.getElementById('action-status');
  const notice = document.getElementById('notice');
  let drawing = false;
  let drawAgain = false;
  // The control to give the focus back to after the next redraw: a pressed button is disabled
  // while its request runs, which takes the focus away from it.
  let refocus = '';

  function say(text) {
    status.textContent = text;
  }

  function warn(text) {
    notice.textContent = text;
    notice.hidden = text === '';
  }

  // Puts the new live part in place and gives the keyboard focus back to the same control (or,
  // when that control is gone or disabled, to its neighbour or the main region).
  function swap(html) {
    const active = document.activeElement;
    const focusId = refocus || (active && main.contains(active) ? active.id : '');
    refocus = '';
    main.innerHTML = html;
    if (!focusId) {
      return;
    }
    const partner = { 'review-on': 'review-off', 'review-off': 'review-on' }[focusId];
    const candidates = [focusId, partner].filter(Boolean).map((id) => document.getElementById(id));
    const target = candidates.find((element) => element && !element.disabled);
    (target || main).focus();
  }

  async function redraw() {
    if (drawing) {
      drawAgain = true;
      return;
    }
    drawing = true;
    try {
      do {
        drawAgain = false;
        const response = await fetch(main.dataset.live, { cache: 'no-store' });
        if (!response.ok) {
          warn('Update failed (' + response.status + '): ' + (await response.text()));
          break;
        }
        swap(await response.text());
      } while (drawAgain);
    } catch (error) {
      say('Update failed; is shellgate panel still running?');
    } finally {
      drawing = false;
    }
  }

  // Buttons: post the form in place. Success is the server's 303 back to the page; anything else
  // carries the reason as text, shown to the person.
  main.addEventListener('submit', async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) {
      return;
    }
    event.preventDefault();
    const button = form.querySelector('button');
    if (button) {
      refocus = button.id;
      button.disabled = true;
    }
    try {
      const response = await fetch(form.action, {
        method: 'POST',
        body: new URLSearchParams(new FormData(form)),
        redirect: 'manual',
      });
      if (response.type === 'opaqueredirect' || response.ok) {
        warn('');
        done.textContent = 'Done: ' + (button ? button.textContent.trim() : 'action') + '.';
      } else {
        done.textContent = '';
        warn(await response.text());
      }
    } catch (error) {
      warn('The panel did not answer; is shellgate panel still running?');
    }
    await redraw();
  });

  const source = new EventSource(main.dataset.events);
  source.addEventListener('ready', () => {
    say('Live');
    redraw();
  });
  source.addEventListener('change', () => {
    redraw();
  });
  // EventSource reconnects by itself (the server asks for 1 s); say so meanwhile.
  source.addEventListener('error', () => {
    say('Disconnected; reconnecting…');
  });
})();
