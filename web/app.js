// SPDX-License-Identifier: GPL-2.0-or-later
// app.js -- labd's dashboard: plain JavaScript, no build step.
//
// Every view reads labd's API with the user's token (kept in sessionStorage,
// sent as an Authorization header, never in a URL) and stays current through
// one Server-Sent Events stream (GET /api/v1/stream) read with fetch(), since
// EventSource cannot send headers.  Pages are routed by path (/jobs/12,
// /boards/sim-01), so a '#L1234' fragment always names a log line.
'use strict';

const API = '/api/v1';
const ROLES = { none: 0, reader: 1, ci: 2, developer: 3, admin: 4 };
const LOG_TAIL = 500;		// lines shown first
const LOG_PAGE = 1000;		// lines loaded per step backwards
const LOG_MAX_DOM = 50000;	// lines kept on the page while following
const JOBS_PAGE = 50;

const state = { who: { name: 'anonymous', role: 'none' }, page: null, stream: null, listeners: new Set() };

// ---- helpers ----

function $(sel, root) { return (root || document).querySelector(sel); }

function el(tag, attrs, ...kids) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false) continue;
		if (k === 'class') e.className = v;
		else if (k === 'text') e.textContent = v;
		else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
		else e.setAttribute(k, v === true ? '' : v);
	}
	for (const kid of kids.flat()) {
		if (kid !== null && kid !== undefined) e.append(kid instanceof Node ? kid : String(kid));
	}
	return e;
}

function link(href, text, cls) { return el('a', { href, 'data-nav': true, class: cls, text }); }

function token() { return sessionStorage.getItem('labd-token') || ''; }

function authHeaders(extra) {
	const h = Object.assign({}, extra || {});
	if (token()) h.Authorization = 'Bearer ' + token();
	return h;
}

function showError(msg) {
	const e = $('#error');
	e.textContent = msg || '';
	e.hidden = !msg;
}

async function api(path, opts) {
	opts = opts || {};
	const resp = await fetch(API + path, {
		method: opts.method || 'GET',
		headers: authHeaders(opts.headers),
		body: opts.body,
	});
	if (opts.raw) return resp;
	const text = await resp.text();
	let body = null;
	try { body = text ? JSON.parse(text) : null; } catch (e) { body = { error: text }; }
	if (!resp.ok) {
		const err = new Error((body && body.error) || resp.statusText);
		err.status = resp.status;
		throw err;
	}
	return body;
}

function post(path, doc) {
	return api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' },
			   body: JSON.stringify(doc || {}) });
}

function may(role) { return ROLES[state.who.role] >= ROLES[role]; }

function when(iso) { return iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : ''; }

function seconds(a, b) {
	if (!a) return '';
	const s = ((b ? Date.parse(b) : Date.now()) - Date.parse(a)) / 1000;
	if (s < 120) return s.toFixed(0) + ' s';
	if (s < 7200) return (s / 60).toFixed(0) + ' min';
	return (s / 3600).toFixed(1) + ' h';
}

// An element showing the time since @iso, kept current by the ticker below.
function since(iso, cls) {
	return el('span', { class: 'since ' + (cls || ''), 'data-since': iso, text: seconds(iso) });
}

setInterval(() => {
	for (const e of document.querySelectorAll('[data-since]')) e.textContent = seconds(e.dataset.since);
}, 1000);

// "complete", "complete, 3 failed" (not green: tests failed), "incomplete"
function healthText(j) {
	if (j.state !== 'finished') return '';
	const fail = (j.results && j.results.fail) || 0;
	return j.health === 'complete' && fail ? `complete, ${fail} failed` : j.health;
}

function healthClass(j) {
	const fail = (j.results && j.results.fail) || 0;
	return 'health ' + (j.health === 'complete' && fail ? 'failed' : j.health);
}

function debounce(fn, ms) {
	let t = null;
	return (...args) => { clearTimeout(t); t = setTimeout(() => fn(...args), ms); };
}

// ---- the live stream: one per page, reconnecting ----

function onLive(fn) { state.listeners.add(fn); }

function dispatchSse(event, data) {
	let doc;
	try { doc = JSON.parse(data); } catch (e) { return; }
	for (const fn of state.listeners) fn(event, doc);
}

async function runStream() {
	const live = $('#live');
	for (;;) {
		const ctl = new AbortController();
		state.stream = ctl;
		try {
			const resp = await fetch(API + '/stream', { headers: authHeaders(), signal: ctl.signal });
			if (!resp.ok) throw new Error('stream: ' + resp.status);
			live.className = 'live on';
			const reader = resp.body.getReader();
			const dec = new TextDecoder();
			let buf = '';
			for (;;) {
				const { value, done } = await reader.read();
				if (done) break;
				buf += dec.decode(value, { stream: true });
				let end;
				while ((end = buf.indexOf('\n\n')) >= 0) {
					const block = buf.slice(0, end);
					buf = buf.slice(end + 2);
					let event = 'message', data = '';
					for (const line of block.split('\n')) {
						if (line.startsWith('event: ')) event = line.slice(7);
						else if (line.startsWith('data: ')) data += line.slice(6);
					}
					if (data) dispatchSse(event, data);
				}
			}
		} catch (e) {
			if (ctl.signal.aborted) return;
		}
		live.className = 'live off';
		await new Promise((r) => setTimeout(r, 2000));
		if (state.stream !== ctl) return;
		route();	// reload the page's data: events may have been missed
	}
}

// ---- login ----

async function whoami() {
	try {
		state.who = await api('/whoami');
	} catch (e) {
		state.who = { name: 'anonymous', role: 'none' };
		if (e.status === 401 && token()) showError('invalid token');
	}
	const logged = !!token();
	$('#who').textContent = state.who.name + ' (' + state.who.role + ')';
	$('#token').hidden = logged;
	$('#login-btn').hidden = logged;
	$('#logout-btn').hidden = !logged;
	try {
		const h = await api('/health');
		$('#lab-name').textContent = h.lab || '';
	} catch (e) { /* shown by the page */ }
}

function setupLogin() {
	$('#login').addEventListener('submit', async (ev) => {
		ev.preventDefault();
		sessionStorage.setItem('labd-token', $('#token').value.trim());
		$('#token').value = '';
		showError('');
		await whoami();
		restartStream();
		route();
	});
	$('#logout-btn').addEventListener('click', async () => {
		sessionStorage.removeItem('labd-token');
		await whoami();
		restartStream();
		route();
	});
}

function restartStream() {
	if (state.stream) state.stream.abort();
	state.stream = null;
	runStream();
}

// ---- routing ----

function navigate(href) {
	history.pushState(null, '', href);
	route();
}

document.addEventListener('click', (ev) => {
	const a = ev.target.closest('a[data-nav]');
	if (!a || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
	ev.preventDefault();
	navigate(a.getAttribute('href'));
});
window.addEventListener('popstate', () => route());

function route() {
	const path = location.pathname.replace(/\/+$/, '') || '/';
	const main = $('#main');
	let m;
	if (state.page && state.page.leave) state.page.leave();
	state.listeners.clear();
	main.replaceChildren();
	showError('');
	if (path === '/') state.page = pageBoards(main);
	else if (path === '/jobs') state.page = pageJobs(main);
	else if (path === '/reservations') state.page = pageReservations(main);
	else if ((m = path.match(/^\/jobs\/(\d+)$/))) state.page = pageJob(main, +m[1]);
	else if ((m = path.match(/^\/boards\/([^/]+)\/console$/))) state.page = pageConsole(main, decodeURIComponent(m[1]));
	else if ((m = path.match(/^\/boards\/([^/]+)$/))) state.page = pageBoard(main, decodeURIComponent(m[1]));
	else main.append(el('p', { text: 'No such page.' }));
}

function fail(e) { showError(e.message || String(e)); }

// ---- boards and queues ----

// What the job on a board does: "job 23 boot smoke by gitlab", "1 min · boot-u-boot (2/3)".
function runningLines(run) {
	const action = run.action ? `${run.action} (${run.action_index}/${run.actions})` : 'finishing';
	return [el('div', { class: 'meta what' }, link('/jobs/' + run.id, 'job ' + run.id), ' ',
			el('span', { class: 'job-name', text: run.name || '' }),
			run.submitter ? el('span', { class: 'submitter', text: ' by ' + run.submitter }) : ''),
		el('div', { class: 'meta doing' }, since(run.started, 'elapsed'), ' · ',
			el('span', { class: 'action', text: action }))];
}

function boardCard(b) {
	const strip = el('div', { class: 'strip', title: 'last jobs, newest first' },
		(b.recent || []).map((j) => el('a', { href: '/jobs/' + j.id, 'data-nav': true,
			class: j.health === 'complete' && j.fail ? 'failed' : j.health,
			title: `job ${j.id}: ${j.health}${j.fail ? ', ' + j.fail + ' failed' : ''}` })));
	const what = b.running ? runningLines(b.running)
		: b.job ? [el('div', { class: 'meta what' }, link('/jobs/' + b.job, 'job ' + b.job))]
		: [el('div', { class: 'meta what', text: b.holder ? 'held by ' + b.holder : (b.reason || '') })];
	return el('div', { class: 'board ' + b.state, 'data-name': b.name },
		el('div', {}, link('/boards/' + encodeURIComponent(b.name), b.name, 'name'), ' ',
			el('span', { class: 'state ' + b.state, text: b.state })),
		el('div', { class: 'meta' }, b.type, ' · console ', el('span', { class: 'console', text: b.console_up ? 'up' : 'down' }),
			' · power ', b.power ? 'controlled' : 'none'),
		what, strip);
}

function queueTable(rows) {
	return el('table', { id: 'queue' },
		el('tr', {}, ['device type', 'queued jobs', 'reservations', 'oldest wait', 'free', 'busy', 'bad'].map((h) => el('th', { text: h }))),
		rows.map((q) => el('tr', { 'data-type': q.device_type },
			el('td', {}, link('/jobs?device_type=' + encodeURIComponent(q.device_type), q.device_type)),
			el('td', { class: 'queued', text: q.queued }), el('td', { class: 'reservations', text: q.reservations }),
			el('td', {}, q.oldest ? since(q.oldest) : ''),
			el('td', { text: q.free }), el('td', { text: q.busy }), el('td', { text: q.bad }))));
}

// Everything that waits for a board, oldest first: queued jobs and waiting reservations.
function waitingTable(jobs, reservations) {
	const rows = jobs.map((j) => ({ at: j.submitted, row: el('tr', { 'data-job': j.id },
		el('td', { text: 'job' }), el('td', {}, link('/jobs/' + j.id, j.id)),
		el('td', { text: j.name }), el('td', { text: j.submitter || '' }), el('td', { text: j.device_type }),
		el('td', { text: (j.tags || []).join(', ') }), el('td', { text: '' }),
		el('td', {}, since(j.submitted))) }));
	for (const r of reservations.filter((x) => x.state === 'waiting'))
		rows.push({ at: r.submitted, row: el('tr', { 'data-reservation': r.id },
			el('td', { text: 'reservation' }), el('td', {}, link('/reservations', r.id)),
			el('td', { text: r.board ? 'board ' + r.board : 'any ' + r.device_type }),
			el('td', { text: r.holder }), el('td', { text: r.device_type }),
			el('td', { text: (r.tags || []).join(', ') }),
			el('td', { class: 'position', text: r.position || '' }), el('td', {}, since(r.submitted))) });
	rows.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
	if (!rows.length) return el('p', { class: 'notice', id: 'waiting', text: 'Nothing waits for a board.' });
	return el('table', { id: 'waiting' },
		el('tr', {}, ['what', 'id', 'name', 'by', 'device type', 'tags', 'position', 'waiting'].map((h) => el('th', { text: h }))),
		...rows.map((r) => r.row));
}

function pageBoards(main) {
	const boards = new Map();
	const grid = el('div', { class: 'grid', id: 'boards' });
	const queue = el('div', {}), waiting = el('div', {});
	main.append(el('h1', { text: 'Boards' }), grid, el('h2', { text: 'Queue per device type' }), queue,
		el('h2', { text: 'Waiting for a board' }), waiting);
	const draw = (b) => {
		const card = boardCard(b), old = grid.querySelector(`.board[data-name="${CSS.escape(b.name)}"]`);
		if (old) old.replaceWith(card); else grid.append(card);
	};
	const loadQueue = async () => {
		try {
			const [q, jobs, res] = await Promise.all([api('/queue'), api('/jobs?state=queued&limit=100'),
				api('/reservations')]);
			queue.replaceChildren(queueTable(q));
			waiting.replaceChildren(waitingTable(jobs.reverse(), res));
			queue.dataset.loaded = '1';
		} catch (e) { fail(e); }
	};
	const reloadQueue = debounce(loadQueue, 500);
	onLive((event, doc) => {
		if (event === 'boards') {
			reloadQueue();	/* a reservation granted, a board back: what waits changed */
			for (const b of doc) {
				b.recent = (boards.get(b.name) || {}).recent || [];
				boards.set(b.name, b);
				draw(b);
			}
		} else if (event === 'job') {
			if (doc.kind === 'finished' && doc.data && doc.data.device && boards.has(doc.data.device)) {
				const b = boards.get(doc.data.device);
				b.recent = [{ id: doc.job, health: doc.data.health, fail: doc.data.results_fail || 0 }]
					.concat(b.recent).slice(0, 20);
				draw(b);
			}
			if (doc.kind === 'action')	/* the card of the job's board says what it does now */
				for (const b of boards.values())
					if (b.running && b.running.id === doc.job) {
						b.running.action = doc.data.name;
						b.running.action_index = doc.data.index;
						draw(b);
					}
			reloadQueue();
		}
	});
	(async () => {
		try {
			for (const b of await api('/devices?recent=20')) {
				boards.set(b.name, b);
				draw(b);
			}
			grid.dataset.loaded = '1';
		} catch (e) { fail(e); }
		loadQueue();
	})();
	const poll = setInterval(loadQueue, 10000);	/* a reservation asked for is no event */
	return { leave: () => clearInterval(poll) };
}

// ---- reservations ----

function reservationRow(r) {
	return el('tr', { 'data-id': r.id, 'data-state': r.state },
		el('td', { text: r.id }), el('td', { class: 'rstate', text: r.state }), el('td', { text: r.holder }),
		el('td', {}, r.device ? link('/boards/' + encodeURIComponent(r.device), r.device)
			: r.board ? 'board ' + r.board : 'any ' + r.device_type),
		el('td', { text: r.device_type }), el('td', { class: 'position', text: r.position || '' }),
		el('td', { text: when(r.submitted) }),
		el('td', {}, r.state === 'active' ? 'until ' + when(r.until) : r.state === 'waiting' ? since(r.submitted) : ''),
		el('td', { text: r.end_reason || '' }));
}

function pageReservations(main) {
	const box = el('div', {}), past = el('div', {});
	main.append(el('h1', { text: 'Reservations' }), box, el('h2', { text: 'Recent' }), past);
	const head = () => el('tr', {}, ['id', 'state', 'holder', 'board', 'device type', 'position', 'asked', 'time', 'ended'].map((h) => el('th', { text: h })));
	const load = async () => {
		try {
			const [now, all] = await Promise.all([api('/reservations'), api('/reservations?all=1')]);
			box.replaceChildren(now.length ? el('table', { id: 'reservations' }, head(), ...now.map(reservationRow))
				: el('p', { class: 'notice', id: 'reservations', text: 'No reservation is active or waiting.' }));
			past.replaceChildren(el('table', { id: 'past-reservations' }, head(),
				...all.filter((r) => r.state !== 'active' && r.state !== 'waiting').slice(0, 50).map(reservationRow)));
			box.dataset.loaded = '1';
		} catch (e) { fail(e); }
	};
	onLive((event) => { if (event === 'boards') load(); });
	load();
	const poll = setInterval(load, 10000);
	return { leave: () => clearInterval(poll) };
}

// ---- the job list ----

function jobRow(j) {
	return el('tr', { 'data-id': j.id },
		el('td', {}, link('/jobs/' + j.id, j.id)), el('td', { text: j.name }),
		el('td', { text: j.device_type }),
		el('td', {}, j.device ? link('/boards/' + encodeURIComponent(j.device), j.device) : ''),
		el('td', { class: 'jstate', text: j.state }),
		el('td', { class: healthClass(j), text: healthText(j) }),
		el('td', { text: j.submitter || '' }), el('td', { text: when(j.submitted) }),
		el('td', { text: j.started ? seconds(j.started, j.ended) : '' }),
		el('td', { text: `${j.results.pass}/${j.results.fail}/${j.results.skip}` }));
}

function pageJobs(main) {
	const params = new URLSearchParams(location.search);
	const fields = [['state', ['', 'queued', 'running', 'canceling', 'finished']],
		['health', ['', 'complete', 'incomplete', 'canceled']],
		['device_type'], ['device'], ['submitter']];
	const form = el('form', { class: 'filters', id: 'job-filters' },
		fields.map(([name, options]) => options
			? el('select', { name }, options.map((o) => el('option', { value: o, text: o || name + ': any', selected: params.get(name) === o })))
			: el('input', { name, placeholder: name.replace('_', ' '), value: params.get(name) || '' })),
		el('button', { type: 'submit', text: 'Filter' }));
	const table = el('table', { id: 'jobs' });
	const pager = el('div', { class: 'pager' });
	main.append(el('h1', { text: 'Jobs' }), form, table, pager);
	form.addEventListener('submit', (ev) => {
		ev.preventDefault();
		const q = new URLSearchParams();
		for (const [k, v] of new FormData(form)) if (v) q.set(k, v);
		navigate('/jobs' + (q.toString() ? '?' + q : ''));
	});
	const load = async () => {
		const q = new URLSearchParams(params);
		q.set('limit', JOBS_PAGE);
		try {
			const jobs = await api('/jobs?' + q);
			table.replaceChildren(el('tr', {}, ['id', 'name', 'device type', 'board', 'state', 'health',
				'submitter', 'submitted', 'duration', 'pass/fail/skip'].map((h) => el('th', { text: h }))),
				...jobs.map(jobRow));
			table.dataset.loaded = '1';
			pager.replaceChildren();
			if (params.get('before')) {
				const newer = new URLSearchParams(params);
				newer.delete('before');
				pager.append(link('/jobs?' + newer, '« newest'));
			}
			if (jobs.length === JOBS_PAGE) {
				const older = new URLSearchParams(params);
				older.set('before', jobs[jobs.length - 1].id);
				pager.append(link('/jobs?' + older, 'older »'));
			}
		} catch (e) { fail(e); }
	};
	const reload = debounce(load, 1000);
	onLive((event, doc) => {
		if (event === 'job' && ['queued', 'started', 'finished', 'requeued'].includes(doc.kind) && !params.get('before')) reload();
	});
	load();
	return {};
}

// ---- a job ----

const RE_ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\r/g;
const RE_KERR = /(Kernel panic|Oops|BUG:|WARNING:|Call [Tt]race|Unable to handle|segfault|end trace)/;
const RE_KMSG = /^\s*(<\d+>)?\[\s*\d+\.\d+\]/;
const RE_PASS = /(RESULT=pass|^ok \d+|\bPASS\b)/;
const RE_FAIL = /(RESULT=fail|^not ok \d+|\bFAIL\b)/;
const RE_SKIP = /(RESULT=skip|# SKIP)/;

function lineClass(text) {
	if (text.startsWith('# labd: ')) return 'labd';
	if (RE_FAIL.test(text)) return 'fail';
	if (RE_PASS.test(text)) return 'pass';
	if (RE_SKIP.test(text)) return 'skip';
	if (RE_KERR.test(text)) return 'kerr';
	if (RE_KMSG.test(text)) return 'kmsg';
	return '';
}

function lineEl(n, text) {
	const clean = text.replace(RE_ANSI, '');
	return el('div', { class: 'line ' + lineClass(clean), id: 'L' + n },
		el('a', { class: 'n', href: '#L' + n, text: n }), clean);
}

// The log of job @id in @box: the tail (or the page around '#L<n>') first,
// earlier pages on demand, then followed live until the job ends.
function logView(box, id, done) {
	const v = { first: 0, next: 0, partial: '', ctl: new AbortController(), pending: [], timer: null,
		    labd: [], labdNext: 0, labdBusy: false };
	const more = el('div', { class: 'more', text: '… load earlier lines' });
	const scrolledDown = () => box.scrollTop + box.clientHeight >= box.scrollHeight - 20;

	const parse = (text, firstLine) => {
		const lines = text.split('\n');
		if (lines.length && lines[lines.length - 1] === '') lines.pop();
		return lines.map((t, i) => lineEl(firstLine + i, t));
	};
	const loadRange = async (query) => {
		const resp = await api(`/jobs/${id}/log?${query}`, { raw: true });
		if (!resp.ok) {	/* 410: retention removed it, and the error says when */
			const body = await resp.json().catch(() => ({}));
			throw new Error(body.error || 'log: ' + resp.status);
		}
		const text = await resp.text();
		return { text, first: +resp.headers.get('X-Log-First-Line') || 1,
			 lines: +resp.headers.get('X-Log-Lines') || 0,
			 size: +resp.headers.get('X-Log-Size') || 0 };
	};
	const loadEarlier = async () => {
		if (v.first <= 1) return;
		const from = Math.max(1, v.first - LOG_PAGE), h = box.scrollHeight;
		const r = await loadRange(`lines=${from}-${v.first - 1}`);
		more.after(...parse(r.text, from));
		v.first = from;
		more.hidden = v.first <= 1;
		box.scrollTop += box.scrollHeight - h;
	};
	// labd's own lines (actions, errors, results) go after the console line they
	// were written at, unnumbered: line numbers stay the console log's.
	const placeLabd = () => {
		for (const l of v.labd) {
			if (l.el.isConnected || l.line < v.first - 1) continue;
			const anchor = l.line < v.first ? more : document.getElementById('L' + l.line);
			/* a line still being printed is redrawn: wait for its end (or the log's) */
			if (!anchor || (anchor.classList.contains('open') && !v.ended)) continue;
			let after = anchor;
			while (after.nextElementSibling && after.nextElementSibling.classList.contains('labd')
			       && after.nextElementSibling.dataset.seq < l.seq) after = after.nextElementSibling;
			after.after(l.el);
		}
	};
	const loadLabd = async () => {
		if (v.labdBusy) return;
		v.labdBusy = true;
		try {
			const r = await api(`/jobs/${id}/labd?after=${v.labdNext}`);
			for (const l of r.lines) {
				l.seq = v.labd.length;
				l.el = el('div', { class: 'line labd ' + l.kind, 'data-seq': l.seq },
					el('span', { class: 'n', text: '' }), `labd ${l.kind}: ${l.text}`);
				v.labd.push(l);
			}
			v.labdNext = r.next;
			placeLabd();
		} finally { v.labdBusy = false; }
	};
	more.addEventListener('click', () => loadEarlier().then(placeLabd).catch(fail));
	box.addEventListener('scroll', () => { if (box.scrollTop === 0 && !more.hidden) loadEarlier().then(placeLabd).catch(fail); });

	const flush = () => {
		v.timer = null;
		const follow = scrolledDown();
		const text = v.partial + v.pending.join('');
		v.pending = [];
		const lines = text.split('\n');
		v.partial = lines.pop();
		const last = box.querySelector('.line.open');
		if (last) { last.remove(); v.next--; }
		const els = lines.map((t) => lineEl(v.next++, t));
		if (v.partial) { const p = lineEl(v.next++, v.partial); p.classList.add('open'); els.push(p); }
		box.append(...els);
		while (box.childElementCount > LOG_MAX_DOM) {	// forget the top: it can be loaded again
			if (!more.nextElementSibling.classList.contains('labd')) v.first++;
			more.nextElementSibling.remove();
			more.hidden = false;
		}
		placeLabd();
		if (follow) box.scrollTop = box.scrollHeight;
	};
	const follow = async (offset) => {
		const resp = await fetch(`${API}/jobs/${id}/log?follow=1&offset=${offset}`,
			{ headers: authHeaders(), signal: v.ctl.signal });
		const reader = resp.body.getReader();
		const dec = new TextDecoder();
		for (;;) {
			const { value, done: end } = await reader.read();
			if (end) break;
			v.pending.push(dec.decode(value, { stream: true }));
			if (!v.timer) v.timer = requestAnimationFrame(flush);
		}
		v.ended = true;
		flush();
		await loadLabd().catch(() => {});
		box.dataset.complete = '1';
		if (done) done();
	};
	(async () => {
		const target = +(location.hash.match(/^#L(\d+)$/) || [])[1];
		let r = await loadRange('tail=' + LOG_TAIL);
		if (target && target < r.first) r = await loadRange(`lines=${Math.max(1, target - LOG_PAGE / 2)}-${target + LOG_PAGE / 2}`);
		v.first = r.first;
		const lines = parse(r.text, r.first);
		box.replaceChildren(more, ...lines);
		more.hidden = v.first <= 1;
		const known = r.first + lines.length;	// lines after these are followed
		v.next = known;
		const t = target && document.getElementById('L' + target);
		if (t) { t.classList.add('target'); t.scrollIntoView({ block: 'center' }); } else box.scrollTop = box.scrollHeight;
		// follow from the end of the last complete line sent
		const endsNl = r.text.endsWith('\n') || !r.text;
		if (!endsNl) { lines[lines.length - 1].remove(); v.next--; }
		const offset = r.size - (endsNl ? 0 : new TextEncoder().encode(r.text.slice(r.text.lastIndexOf('\n') + 1)).length);
		await loadLabd().catch(() => {});
		box.dataset.loaded = '1';
		await follow(offset);
	})().catch((e) => { if (!v.ctl.signal.aborted) fail(e); });
	return { leave: () => v.ctl.abort(), labd: () => loadLabd().catch(() => {}) };
}

const PHASE_COLORS = ['#1f6feb', '#2e8b57', '#8250df', '#9a6700', '#cf222e', '#0598bc', '#bf3989'];

// The boot phases as a bar (a segment per phase, to scale) and a legend that
// names each one in full with its time from power-on.
function timeline(phases) {
	if (!phases || !phases.length) return el('p', { class: 'notice', text: 'No boot phases recorded.' });
	const bar = el('div', { class: 'timeline', id: 'timeline' });
	const legend = el('div', { class: 'timeline-legend', id: 'timeline-legend' });
	const end = phases[phases.length - 1].t || 1;
	phases.forEach((p, i) => {
		const next = i + 1 < phases.length ? phases[i + 1].t : end;
		const d = Math.max(next - p.t, 0), color = PHASE_COLORS[i % PHASE_COLORS.length];
		bar.append(el('div', { style: `flex: ${Math.max(d, end / 50)} 0 0; background: ${color}`,
			title: `${p.phase}: from ${p.t.toFixed(2)} s` }));
		legend.append(el('span', { class: 'phase' }, el('i', { style: `background: ${color}` }),
			el('span', { class: 'phase-name', text: p.phase }), ` ${p.t.toFixed(2)} s`));
	});
	return el('div', {}, bar, legend);
}

function resultsTable(results) {
	if (!results.length) return el('p', { class: 'notice', text: 'No results yet.' });
	return el('table', { id: 'results' },
		el('tr', {}, ['suite', 'name', 'result', 'measurement', 'log'].map((h) => el('th', { text: h }))),
		results.map((r) => el('tr', {},
			el('td', { text: r.suite }), el('td', { text: r.name }),
			el('td', { class: 'result ' + r.result, text: r.result }),
			el('td', { text: r.measurement === null ? '' : r.measurement + ' ' + (r.units || '') }),
			el('td', {}, r.log_start ? el('a', { href: '#L' + r.log_start, text: 'L' + r.log_start }) : ''))));
}

// What the job does now: its place in the queue, or the action running.
function jobNow(job) {
	if (job.state === 'queued' && job.waiting) return el('td', { id: 'job-waiting', text: job.waiting.text });
	if (job.state === 'running' && job.action)
		return el('td', { id: 'job-action' }, `${job.action.name} (${job.action.index}/${job.action.of}) · running for `,
			since(job.started));
	return el('td', {});
}

function pageJob(main, id) {
	const head = el('div', {}), phases = el('div', {}), results = el('div', {});
	const box = el('div', { class: 'log', id: 'log' });
	main.append(head, el('h2', { text: 'Boot phases' }), phases, el('h2', { text: 'Results' }), results,
		el('h2', { text: 'Console log' }), box);
	let job = null;
	const loadResults = async () => { results.replaceChildren(resultsTable(await api(`/jobs/${id}/results`))); };
	const load = async () => {
		job = await api('/jobs/' + id);
		const actions = el('div', { class: 'actions' });
		if (may('ci') && job.state !== 'finished')
			actions.append(el('button', { id: 'cancel', text: 'Cancel', onclick: () => cancel().catch(fail) }));
		if (may('ci') && job.definition)
			actions.append(el('button', { id: 'resubmit', text: 'Resubmit', onclick: () => resubmit().catch(fail) }));
		const res = job.results || {};
		head.replaceChildren(el('h1', {}, `Job ${job.id}: ${job.name || ''} `),
			el('table', { class: 'kv', id: 'job-info' },
				el('tr', {}, el('td', { text: 'state' }), el('td', { id: 'job-state', text: job.state })),
				el('tr', {}, el('td', { text: 'health' }), el('td', { id: 'job-health', class: healthClass(job), text: healthText(job) })),
				el('tr', {}, el('td', { text: 'results' }), el('td', { id: 'job-results', class: res.fail ? 'counts failed' : 'counts' },
					`${res.pass || 0} passed, ${res.fail || 0} failed, ${res.skip || 0} skipped` + (res.unknown ? `, ${res.unknown} unknown` : ''))),
				job.state === 'queued' || job.state === 'running' ? el('tr', {}, el('td', { text: 'now' }), jobNow(job)) : null,
				el('tr', {}, el('td', { text: job.health === 'canceled' ? 'reason' : 'error' }),
					el('td', { id: 'job-error', text: !job.error_msg ? '' : job.health === 'canceled' ? job.error_msg
						: `${job.error_type}: ${job.error_msg}` })),
				el('tr', {}, el('td', { text: 'board' }), el('td', {}, job.device ? link('/boards/' + encodeURIComponent(job.device), job.device) : '')),
				el('tr', {}, el('td', { text: 'device type' }), el('td', { text: job.device_type })),
				el('tr', {}, el('td', { text: 'submitter' }), el('td', { text: job.submitter || '' })),
				el('tr', {}, el('td', { text: 'submitted' }), el('td', { text: when(job.submitted) })),
				el('tr', {}, el('td', { text: 'duration' }), el('td', { text: seconds(job.started, job.ended) })),
				el('tr', {}, el('td', { text: 'documents' }), el('td', {},
					el('a', { href: `${API}/jobs/${id}/log`, text: 'plain log' }), ' · ',
					el('a', { href: `${API}/jobs/${id}/junit`, text: 'JUnit' }), ' · ',
					el('a', { href: `${API}/jobs/${id}/kcidb`, text: 'KCIDB' })))),
			actions);
		phases.replaceChildren(timeline(job.phases));
	};
	const cancel = async () => { await post(`/jobs/${id}/cancel`); await load(); };
	const resubmit = async () => {
		const type = job.format === 'json' ? 'application/json' : 'application/yaml';
		const j = await api('/jobs', { method: 'POST', headers: { 'Content-Type': type }, body: job.definition });
		navigate('/jobs/' + j.id);
	};
	const reload = debounce(() => load().catch(fail), 300);
	let log = null;
	onLive((event, doc) => {
		if (event !== 'job' || doc.job !== id) return;
		if (doc.kind === 'result' || doc.kind === 'finished') loadResults().catch(fail);
		if (log && doc.kind !== 'result') log.labd();	/* labd wrote a line about it */
		reload();
	});
	load().then(loadResults).catch(fail);
	log = logView(box, id, () => load().then(loadResults).catch(fail));
	return { leave: log.leave };
}

// ---- a board ----

async function phaseChart(canvas, name) {
	const jobs = await api(`/jobs?device=${encodeURIComponent(name)}&state=finished&limit=20`);
	const details = await Promise.all(jobs.reverse().map((j) => api('/jobs/' + j.id)));
	const names = [];
	for (const j of details) for (const p of j.phases || []) if (!names.includes(p.phase)) names.push(p.phase);
	const colors = ['#1f6feb', '#2e8b57', '#8250df', '#9a6700', '#cf222e', '#0598bc', '#bf3989'];
	const datasets = names.map((n, i) => ({
		label: n, backgroundColor: colors[i % colors.length],
		data: details.map((j) => {
			const ph = j.phases || [], k = ph.findIndex((p) => p.phase === n);
			if (k < 0 || k + 1 >= ph.length) return 0;
			return +(ph[k + 1].t - ph[k].t).toFixed(3);
		}),
	}));
	// a job that did not complete, or whose tests failed, is marked under its bar
	const bad = details.map((j) => j.health !== 'complete' || (j.results && j.results.fail > 0));
	canvas.dataset.jobs = details.length;
	canvas.dataset.failed = bad.filter((x) => x).length;
	if (typeof Chart === 'undefined') throw new Error('Chart.js is not installed (make deps)');
	const chart = new Chart(canvas, {
		type: 'bar',
		data: { labels: details.map((j, i) => '#' + j.id + (bad[i] ? ' ✗ ' + healthText(j) : '')), datasets },
		options: { animation: false, responsive: true, plugins: { title: { display: true, text: 'Boot phase durations (s) of recent jobs; ✗ marks a job that failed' } },
			   scales: { x: { stacked: true, ticks: { color: (c) => bad[c.index] ? '#cf222e' : '#6b7280' } },
				     y: { stacked: true, title: { display: true, text: 'seconds' } } } },
	});
	window.labdChart = chart;	/* for the browser tests */
	return chart;
}

function pageBoard(main, name) {
	const info = el('div', {}), canvas = el('canvas', { id: 'phase-chart' });
	main.append(info, el('h2', { text: 'Boot phases of recent jobs' }), el('div', { class: 'chart' }, canvas),
		el('h2', { text: 'Recent jobs' }), el('table', { id: 'board-jobs' }));
	let chart = null;
	const load = async () => {
		const b = await api('/devices/' + encodeURIComponent(name));
		const actions = el('div', { class: 'actions' });
		const act = (id, text, fn) => actions.append(el('button', { id, text, onclick: () => fn().then(load).catch(fail) }));
		actions.append(link(`/boards/${encodeURIComponent(name)}/console`, 'Console'));
		if (may('admin')) {
			if (b.state !== 'maintenance') act('maintenance', 'Maintenance', () => post(`/devices/${name}/state`, { state: 'maintenance', reason: 'set from the dashboard' }));
			if (b.state === 'maintenance' || b.state === 'bad') act('idle', 'Back to idle', () => post(`/devices/${name}/state`, { state: 'idle' }));
		}
		if (may('developer') && !b.holder) act('reserve', 'Reserve 1 h', () => post('/reservations', { board: name, duration: 3600 }));
		if (may('developer') && b.holder && (b.holder === state.who.name || may('admin'))) act('release', 'Release', () => post(`/devices/${name}/release`));
		info.replaceChildren(el('h1', {}, 'Board ', name, ' ', el('span', { class: 'state ' + b.state, id: 'board-state', text: b.state })),
			el('table', { class: 'kv' },
				el('tr', {}, el('td', { text: 'device type' }), el('td', { text: b.type })),
				el('tr', {}, el('td', { text: 'job' }), el('td', {}, b.running ? runningLines(b.running)
					: b.job ? link('/jobs/' + b.job, b.job) : '')),
				el('tr', {}, el('td', { text: 'holder' }), el('td', { text: b.holder ? `${b.holder} until ${when(b.hold_until)}` : '' })),
				el('tr', {}, el('td', { text: 'console' }), el('td', { text: (b.console_up ? 'up' : 'down') + `, ${b.viewers} viewer(s)` })),
				el('tr', {}, el('td', { text: 'reason' }), el('td', { text: b.reason || '' }))),
			actions);
		const jobs = await api(`/jobs?device=${encodeURIComponent(name)}&limit=20`);
		const table = $('#board-jobs');
		table.replaceChildren(el('tr', {}, ['id', 'name', 'state', 'health', 'pass/fail/skip', 'submitted'].map((h) => el('th', { text: h }))),
			...jobs.map((j) => el('tr', { 'data-id': j.id }, el('td', {}, link('/jobs/' + j.id, j.id)), el('td', { text: j.name }),
				el('td', { text: j.state }), el('td', { class: healthClass(j), text: healthText(j) }),
				el('td', { text: `${j.results.pass}/${j.results.fail}/${j.results.skip}` }),
				el('td', { text: when(j.submitted) }))));
		table.dataset.loaded = '1';
	};
	const drawChart = async () => {
		if (chart) chart.destroy();
		chart = await phaseChart(canvas, name);
		canvas.dataset.drawn = '1';
	};
	onLive((event, doc) => {
		if (event === 'boards' && doc.some((b) => b.name === name)) load().catch(fail);
		if (event === 'job' && doc.kind === 'finished' && doc.data && doc.data.device === name) drawChart().catch(fail);
	});
	load().catch(fail);
	drawChart().catch(fail);
	return { leave: () => chart && chart.destroy() };
}

// ---- the console of a board, in xterm.js over a WebSocket ----

const FRAME_DATA = 0x64, FRAME_NOTICE = 0x6e, FRAME_MAX = 4096;	// viewer_proto.h

function frame(type, bytes) {
	const out = [];
	for (let i = 0; i === 0 || i < bytes.length; i += FRAME_MAX) {
		const part = bytes.subarray(i, i + FRAME_MAX);
		const f = new Uint8Array(3 + part.length);
		f[0] = type; f[1] = part.length >> 8; f[2] = part.length & 255;
		f.set(part, 3);
		out.push(f);
	}
	return out;
}

function pageConsole(main, name) {
	const status = el('p', { class: 'notice', id: 'console-status', text: 'connecting…' });
	const box = el('div', { id: 'terminal' });
	main.append(el('h1', {}, 'Console of ', link('/boards/' + encodeURIComponent(name), name)), status, box);
	if (typeof Terminal === 'undefined') { fail(new Error('xterm.js is not installed (make deps)')); return {}; }
	const term = new Terminal({ convertEol: false, scrollback: 10000, fontSize: 13, cols: 120, rows: 32 });
	term.open(box);
	window.labdTerm = term;	// for the browser tests
	const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
	const protocols = ['labd-console'].concat(token() ? ['labd-token.' + token()] : []);
	const ws = new WebSocket(`${proto}//${location.host}${API}/devices/${encodeURIComponent(name)}/console`, protocols);
	ws.binaryType = 'arraybuffer';
	let buf = new Uint8Array(0);
	const enc = new TextEncoder(), dec = new TextDecoder();
	ws.onopen = () => { status.textContent = `attached as ${state.who.name} (${state.who.role}); keys are logged with your name`; box.dataset.open = '1'; term.focus(); };
	ws.onclose = () => { status.textContent = 'detached'; box.dataset.open = ''; };
	ws.onmessage = (ev) => {
		const add = new Uint8Array(ev.data), all = new Uint8Array(buf.length + add.length);
		all.set(buf); all.set(add, buf.length);
		let off = 0;
		while (all.length - off >= 3) {
			const n = (all[off + 1] << 8) | all[off + 2];
			if (all.length - off < 3 + n) break;
			const payload = all.subarray(off + 3, off + 3 + n);
			if (all[off] === FRAME_DATA) term.write(payload);
			else if (all[off] === FRAME_NOTICE) {
				const msg = dec.decode(payload);
				status.textContent = msg;
				term.write('\r\n\x1b[33m[labd] ' + msg + '\x1b[0m\r\n');
			}
			off += 3 + n;
		}
		buf = all.slice(off);
	};
	// keys typed in a burst go as one chunk, so labd logs "alice: uname -a", not letters
	let keys = '', flushTimer = null;
	const flush = () => {
		flushTimer = null;
		if (ws.readyState === WebSocket.OPEN && keys)
			for (const f of frame(FRAME_DATA, enc.encode(keys))) ws.send(f);
		keys = '';
	};
	const typed = term.onData((data) => {
		keys += data;
		if (/[\r\x03\x04]/.test(data)) flush();
		else if (!flushTimer) flushTimer = setTimeout(flush, 30);
	});
	return { leave: () => { typed.dispose(); ws.close(); term.dispose(); } };
}

// ---- start ----

// Leaving the page ends its streams at once, so the browser does not keep
// their connections (it has six per server) waiting to drain.
window.addEventListener('pagehide', () => {
	if (state.page && state.page.leave) state.page.leave();
	if (state.stream) state.stream.abort();
	state.stream = null;
});

setupLogin();
whoami().then(() => { route(); runStream(); });
