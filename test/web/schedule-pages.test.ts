/**
 * The schedule pages in a real browser (Chromium) against a real
 * terdut-server on PGlite: an admin builds a schedule, a rotation and an
 * override through the pages (each checked through the API afterwards), a
 * person subscribes to their own calendar feed, and a member sees no admin
 * controls. (The PostgreSQL side of the same routes is covered by the
 * server's own tests; the pages do not depend on the database.)
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  ADMIN_PASSWORD,
  assertAccessible,
  assertNoHorizontalScroll,
  DESKTOP,
  launchChromium,
  MEMBER_PASSWORD,
  PHONE,
  screenshot,
  signIn,
  startWebStack,
  type WebStack,
} from './support.ts';

/** Today's date and the Monday of this week (`YYYY-MM-DD`) in Europe/Berlin. */
function berlinDates(): { today: string; monday: string } {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
  const value = new Date(`${today}T00:00:00Z`);
  value.setUTCDate(value.getUTCDate() - ((value.getUTCDay() + 6) % 7));
  return { today, monday: value.toISOString().slice(0, 10) };
}

describe('the schedule pages [pglite]', () => {
  let browser: Browser;
  let stack: WebStack;
  let carol: number;
  let scheduleId: number;
  const contexts: BrowserContext[] = [];

  before(async () => {
    browser = await launchChromium();
    stack = await startWebStack('pglite');
    const created = await stack.api('POST', '/api/users', { username: 'carol', email: 'carol@example.com' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    carol = created.body.id;
  });
  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await stack?.close();
    await browser?.close();
  });

  async function newPage(
    as: 'admin' | 'mia',
    options: { phone?: boolean; dark?: boolean; timezoneId?: string } = {},
  ): Promise<Page> {
    const context = await browser.newContext({
      ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
      ...(options.phone
        ? { viewport: PHONE, isMobile: true, hasTouch: true, deviceScaleFactor: 1 }
        : { viewport: DESKTOP }),
      colorScheme: options.dark ? 'dark' : 'light',
    });
    contexts.push(context);
    const page = await context.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page, stack.url, as, as === 'admin' ? ADMIN_PASSWORD : MEMBER_PASSWORD);
    return page;
  }

  test('an admin creates a Berlin schedule, a weekly rotation and an override on the pages', async () => {
    const page = await newPage('admin');
    await page.goto(`${stack.url}/schedules`);
    await page.getByRole('heading', { name: 'Schedules' }).waitFor();
    await page.getByLabel('Schedule name').fill('Databases');
    await page.getByLabel('Time zone (IANA, e.g. Europe/Berlin)').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.getByRole('link', { name: 'Databases' }).click();
    await page.getByRole('heading', { name: 'Schedule: Databases' }).waitFor();
    scheduleId = Number(/\/schedules\/(\d+)$/.exec(page.url())?.[1]);
    const schedule = await stack.api('GET', `/api/schedules/${scheduleId}`);
    assert.equal(schedule.status, 200);
    assert.equal(schedule.body.name, 'Databases');
    assert.equal(schedule.body.time_zone, 'Europe/Berlin');
    assert.equal(schedule.body.is_default, false);
    await page.getByText('Times are in Europe/Berlin').waitFor();

    // A weekly rotation, admin then mia, handing over on Mondays at 09:00.
    const { monday } = berlinDates();
    await page.getByRole('button', { name: 'New rotation' }).click();
    const form = page.getByRole('form', { name: 'New rotation' });
    await form.getByLabel('Rotation name').fill('Weekly');
    for (const person of ['admin', 'mia']) {
      await form.getByLabel('Person to add').selectOption({ label: person });
      await form.getByRole('button', { name: 'Add participant' }).click();
    }
    await form.getByLabel('Shift length').fill('1');
    await form.getByLabel('Shift unit').selectOption('weeks');
    await form.getByLabel('Start date').fill(monday);
    await form.getByLabel('Handoff time').fill('09:00');
    await form.getByRole('button', { name: 'Add rotation' }).click();
    await page.getByRole('button', { name: 'Edit Weekly' }).waitFor();
    const rotations = (await stack.api('GET', `/api/schedules/${scheduleId}`)).body.rotations;
    assert.equal(rotations.length, 1);
    assert.deepEqual(
      {
        name: rotations[0].name,
        people: rotations[0].participants.map((p: { username: string }) => p.username),
        length: rotations[0].shift_length,
        unit: rotations[0].shift_unit,
        start: rotations[0].start_date,
        handoff: rotations[0].handoff_time,
      },
      { name: 'Weekly', people: ['admin', 'mia'], length: 1, unit: 'weeks', start: monday, handoff: '09:00' },
    );
    // The timeline names the rotation's people with Monday 09:00 handoffs in Berlin time.
    const segments = page.getByRole('list', { name: 'Who is on call, in order' });
    await segments
      .getByText(/Mon \d{4}-\d{2}-\d{2} 09:00/)
      .first()
      .waitFor();
    assert.match(await segments.innerText(), /admin[\s\S]*mia|mia[\s\S]*admin/);

    // Editing keeps the same rotation: restricting it to weekdays.
    await page.getByRole('button', { name: 'Edit Weekly' }).click();
    const edit = page.getByRole('form', { name: 'Edit rotation Weekly' });
    for (const day of ['Mon', 'Tue', 'Wed', 'Thu', 'Fri'])
      await edit.getByRole('checkbox', { name: day, exact: true }).check();
    // And ending it in a year (the project it covers ends then).
    const inAYear = `${Number(monday.slice(0, 4)) + 1}${monday.slice(4)}`;
    await edit.getByLabel(/^End date/).fill(inAYear);
    await edit.getByRole('button', { name: 'Save rotation' }).click();
    await page.getByText('restrictions: Mon, Tue, Wed, Thu, Fri').waitFor();
    await page.getByText(`ending ${inAYear}`).waitFor();
    const edited = (await stack.api('GET', `/api/schedules/${scheduleId}`)).body.rotations;
    assert.deepEqual(edited[0].restriction, { weekdays: [1, 2, 3, 4, 5] });
    assert.equal(edited[0].end_date, inAYear);
    assert.equal(edited[0].id, rotations[0].id);

    // Add override: one form, one submit, defaults now → +1 day.
    const override = page.getByRole('form', { name: 'Add override' });
    const from = await override.getByLabel('From (Europe/Berlin)').inputValue();
    const to = await override.getByLabel('To (Europe/Berlin)').inputValue();
    assert.match(from, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    await override.getByLabel('Person covering').selectOption({ label: 'carol' });
    await override.getByRole('button', { name: 'Add override' }).click();
    await page.getByRole('button', { name: /^Delete the override of carol/ }).waitFor();
    const overrides = (await stack.api('GET', `/api/schedules/${scheduleId}/overrides`)).body;
    assert.equal(overrides.length, 1);
    assert.equal(overrides[0].user_id, carol);
    const hours = (Date.parse(overrides[0].ends_at) - Date.parse(overrides[0].starts_at)) / 3_600_000;
    assert.ok(
      hours >= 23 && hours <= 25,
      `the default override lasts a day, not ${hours} h (${from} → ${to})`,
    );
    assert.ok(Math.abs(Date.parse(overrides[0].starts_at) - Date.now()) < 5 * 60_000, 'it starts now');
    // The wall-clock time shown is Berlin's, not the browser's.
    const berlinNow = new Intl.DateTimeFormat('en-CA', {
      timeZone: 'Europe/Berlin',
      hourCycle: 'h23',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date(overrides[0].starts_at));
    assert.equal(from.slice(11), berlinNow);
    const onCall = (await stack.api('GET', `/api/schedules/${scheduleId}/on-call`)).body;
    assert.equal(onCall.username, 'carol');
    assert.equal(onCall.source, 'override');
    // The timeline starts with carol's override.
    const first = segments.getByRole('listitem').first();
    await first.getByText('carol', { exact: true }).waitFor();
    assert.match(await first.innerText(), /override/);

    // Overrides are listed in the order they start, not in the order they were made.
    const day = 24 * 3_600_000;
    const later = await stack.api('POST', `/api/schedules/${scheduleId}/overrides`, {
      user_id: stack.member.id,
      starts_at: new Date(Date.now() + 10 * day).toISOString(),
      ends_at: new Date(Date.now() + 11 * day).toISOString(),
    });
    const sooner = await stack.api('POST', `/api/schedules/${scheduleId}/overrides`, {
      user_id: stack.admin.id,
      starts_at: new Date(Date.now() + 5 * day).toISOString(),
      ends_at: new Date(Date.now() + 6 * day).toISOString(),
    });
    assert.equal(later.status, 201, JSON.stringify(later.body));
    assert.equal(sooner.status, 201, JSON.stringify(sooner.body));
    await page.reload();
    const listed = page.locator('ul.overrides li strong');
    await listed.nth(2).waitFor();
    assert.deepEqual(await listed.allInnerTexts(), ['carol', 'admin', 'mia']);
    for (const made of [later, sooner])
      await stack.api('DELETE', `/api/schedules/${scheduleId}/overrides/${made.body.id}`);
    await page.reload();
    await page.getByRole('button', { name: /^Delete the override of carol/ }).waitFor();
    await screenshot(page, 'schedule-detail-desktop');

    // The override goes again with its Delete button.
    await page.getByRole('button', { name: /^Delete the override of carol/ }).click();
    await page.getByText('No overrides in the coming year.').waitFor();
    assert.deepEqual((await stack.api('GET', `/api/schedules/${scheduleId}/overrides`)).body, []);

    // Cover planned six weeks ahead (a holiday) is listed too, and can be deleted from the page.
    const ahead = Date.now() + 42 * 86_400_000;
    const holiday = await stack.api('POST', `/api/schedules/${scheduleId}/overrides`, {
      user_id: carol,
      starts_at: new Date(ahead).toISOString(),
      ends_at: new Date(ahead + 86_400_000).toISOString(),
    });
    assert.equal(holiday.status, 201);
    await page.reload();
    await page.getByRole('button', { name: /^Delete the override of carol/ }).click();
    await page.getByText('No overrides in the coming year.').waitFor();
    const until = new Date(ahead + 2 * 86_400_000).toISOString();
    const left = await stack.api('GET', `/api/schedules/${scheduleId}/overrides?to=${until}`);
    assert.deepEqual(left.body, []);
    // Put it back for the pages below.
    await stack.api('POST', `/api/schedules/${scheduleId}/overrides`, {
      user_id: carol,
      starts_at: new Date().toISOString(),
      ends_at: new Date(Date.now() + 3_600_000).toISOString(),
    });

    // The list shows now and next for each schedule.
    await page.goto(`${stack.url}/schedules`);
    const card = page.getByRole('listitem').filter({ has: page.getByRole('link', { name: 'Databases' }) });
    await card.getByText(/Now: carol/).waitFor();
    assert.match(await card.innerText(), /Europe\/Berlin/);
    // After carol's hour comes the weekday rotation, or no one when that hour ends on a weekend
    // (or before the rotation's first Monday 09:00): the card shows the same as the API.
    const { next } = (await stack.api('GET', `/api/schedules/${scheduleId}/now`)).body;
    const endsOn = new Intl.DateTimeFormat('en', { timeZone: 'Europe/Berlin', weekday: 'short' }).format(
      new Date(next.since),
    );
    if (['Tue', 'Wed', 'Thu', 'Fri'].includes(endsOn)) assert.match(next.username, /^(admin|mia)$/);
    if (['Sat', 'Sun'].includes(endsOn)) assert.equal(next.username, undefined);
    assert.match(await card.innerText(), new RegExp(`Next: ${next.username ?? 'no one'}`));
  });

  test('a rotation with a person in it twice (admin, mia, admin, carol) is edited place by place', async () => {
    const schedule = await stack.api('POST', '/api/schedules', {
      name: 'Repeats',
      time_zone: 'Europe/Berlin',
    });
    assert.equal(schedule.status, 201, JSON.stringify(schedule.body));
    const id = schedule.body.id as number;
    const rotation = await stack.api('POST', `/api/schedules/${id}/rotations`, {
      name: 'Twice',
      participant_ids: [stack.admin.id, stack.member.id, stack.admin.id, carol],
      shift_length: 1,
      shift_unit: 'weeks',
      start_date: berlinDates().monday,
      handoff_time: '09:00',
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    const order = async () =>
      (
        (await stack.api('GET', `/api/schedules/${id}`)).body.rotations[0].participants as {
          username: string;
        }[]
      ).map((participant) => participant.username);

    const page = await newPage('admin');
    await page.goto(`${stack.url}/schedules/${id}`);
    await page.getByText('admin → mia → admin → carol').waitFor();

    await page.getByRole('button', { name: 'Edit Twice' }).click();
    const form = page.getByRole('form', { name: 'Edit rotation Twice' });
    const places = form.locator('ol.participants > li');
    const names = async () => (await places.allInnerTexts()).map((text) => text.replace(/[↑×\s]+$/u, ''));
    assert.deepEqual(await names(), ['admin', 'mia', 'admin', 'carol']);
    // The second admin goes; the first stays where it was.
    await places
      .nth(2)
      .getByRole('button', { name: /^Remove admin/ })
      .click();
    assert.deepEqual(await names(), ['admin', 'mia', 'carol']);
    // Someone already in the order can be added again, at the end.
    await form.getByLabel('Person to add').selectOption({ label: 'admin' });
    await form.getByRole('button', { name: 'Add participant' }).click();
    assert.deepEqual(await names(), ['admin', 'mia', 'carol', 'admin']);
    await places
      .nth(3)
      .getByRole('button', { name: /^Move admin up/ })
      .click();
    assert.deepEqual(await names(), ['admin', 'mia', 'admin', 'carol']);
    // And the first admin goes: the second one stays, after mia.
    await places
      .nth(0)
      .getByRole('button', { name: /^Remove admin/ })
      .click();
    assert.deepEqual(await names(), ['mia', 'admin', 'carol']);
    await form.getByRole('button', { name: 'Save rotation' }).click();
    await page.getByText('mia → admin → carol').waitFor();
    assert.deepEqual(await order(), ['mia', 'admin', 'carol']);
  });

  test("the schedule's feed and a person's own feed are shown once and serve text/calendar", async () => {
    const page = await newPage('admin');
    await page.goto(`${stack.url}/schedules/${scheduleId}`);
    await page.getByRole('heading', { name: 'Calendar feed' }).waitFor();
    const turnOff = page.getByRole('button', { name: 'Turn the feed off' });
    assert.equal(await turnOff.count(), 0, 'no feed yet: nothing to turn off');
    await page.getByRole('button', { name: 'Turn on or get a new feed URL' }).click();
    const scheduleFeed = (await page.getByTestId('feed-url').innerText()).trim();
    assert.match(scheduleFeed, /\/api\/calendar\/.+\.ics$/);
    const scheduleIcs = await fetch(scheduleFeed);
    assert.equal(scheduleIcs.status, 200);
    assert.match(scheduleIcs.headers.get('content-type') ?? '', /^text\/calendar/);
    assert.match(await scheduleIcs.text(), /carol/);
    // Opened again, the page knows the feed is on.
    await page.reload();
    await page.getByText(/^The feed is on; its URL was made /).waitFor();
    await turnOff.click();
    await page.getByText('The feed is off.').waitFor();
    assert.equal(await turnOff.count(), 0);
    assert.equal((await fetch(scheduleFeed)).status, 404);

    // mia, a member, on her Me page.
    const mia = await newPage('mia', { phone: true });
    await mia.goto(`${stack.url}/me`);
    await mia.getByRole('heading', { name: 'My calendar feed' }).waitFor();
    await mia.getByRole('button', { name: 'Turn on or get a new feed URL' }).click();
    const first = (await mia.getByTestId('feed-url').innerText()).trim();
    await assertNoHorizontalScroll(mia, 'the Me page with a feed URL');
    const ics = await fetch(first);
    assert.equal(ics.status, 200);
    assert.match(ics.headers.get('content-type') ?? '', /^text\/calendar/);
    const body = await ics.text();
    assert.match(body, /^BEGIN:VCALENDAR/);
    assert.match(body, /Databases/, 'mia is in the Weekly rotation of Databases');
    // A new URL makes the old one stop working.
    await mia.getByRole('button', { name: 'Turn on or get a new feed URL' }).click();
    await mia.getByTestId('feed-url').filter({ hasNotText: first }).waitFor();
    assert.equal((await fetch(first)).status, 404);
  });

  test("when a feed's URL was made is said in the server's zone, not the browser's", async () => {
    const made = await stack.api('POST', `/api/users/${stack.member.id}/calendar-feed`);
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const since = (await stack.api('GET', '/api/me', undefined, stack.member.key)).body
      .calendar_feed_created_at;
    // mia reads it on a laptop set to New York; the server's zone is Berlin, 6 hours ahead.
    const page = await newPage('mia', { timezoneId: 'America/New_York' });
    await page.goto(`${stack.url}/me`);
    const said = await page.getByText(/^The feed is on; its URL was made /).innerText();
    const berlin = new Intl.DateTimeFormat('sv-SE', {
      timeZone: 'Europe/Berlin',
      dateStyle: 'short',
      timeStyle: 'short',
    }).format(new Date(since));
    assert.ok(said.includes(`${berlin} (Europe/Berlin)`), `${said} says ${berlin} (Europe/Berlin)`);
    await stack.api('DELETE', `/api/users/${stack.member.id}/calendar-feed`);
  });

  test('a link to a month that is not one shows this month, and the app goes on working', async () => {
    const page = await newPage('admin');
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    for (const month of ['2026-13', '2026-00']) {
      await page.goto(`${stack.url}/schedule?month=${month}`);
      const thisMonth = new Date().toLocaleString('en', { month: 'long', year: 'numeric', timeZone: 'UTC' });
      await page.getByRole('heading', { name: thisMonth }).waitFor();
    }
    await page.getByRole('link', { name: 'Incidents', exact: true }).click();
    await page.getByRole('heading', { name: 'Incidents' }).waitFor();
    assert.deepEqual(errors, []);
  });

  test('a member sees the schedules but no admin controls', async () => {
    const page = await newPage('mia');
    await page.goto(`${stack.url}/schedules`);
    await page.getByRole('link', { name: 'Databases' }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create schedule' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^Make .* the default$/ }).count(), 0);
    await page.goto(`${stack.url}/schedules/${scheduleId}`);
    await page.getByRole('heading', { name: 'Rotations' }).waitFor();
    await page
      .getByText(/^admin$|admin →/)
      .first()
      .waitFor();
    assert.equal(await page.locator('main button').count(), 0, 'no buttons at all for a member');
    assert.equal(await page.getByRole('form').count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Calendar feed' }).count(), 0);
    // The timeline is the same for everyone.
    await page
      .getByRole('list', { name: 'Who is on call, in order' })
      .getByText('carol', { exact: true })
      .first()
      .waitFor();
  });

  test("the month page counts days in the default schedule's own zone once an admin sets one", async () => {
    const schedules = (await stack.api('GET', '/api/schedules')).body as {
      id: number;
      is_default: boolean;
    }[];
    const defaultId = schedules.find((schedule) => schedule.is_default)!.id;
    // Kiritimati (UTC+14) is a day ahead of the server's Europe/Berlin for most of each day.
    const zone = 'Pacific/Kiritimati';
    assert.equal((await stack.api('PATCH', `/api/schedules/${defaultId}`, { time_zone: zone })).status, 200);
    try {
      const page = await newPage('admin', { phone: true });
      await page.goto(`${stack.url}/schedule`);
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone }).format(new Date());
      await page.getByText(`On call today (${today})`).waitFor();
      await page.getByText(zone, { exact: true }).waitFor();
      assert.equal(await page.locator('.day.today').getAttribute('data-date'), today);
    } finally {
      await stack.api('PATCH', `/api/schedules/${defaultId}`, { time_zone: 'Europe/Berlin' });
    }
  });

  test("a day with a handoff shows both people on the month page; a rotation's day has no remove button", async () => {
    const schedules = (await stack.api('GET', '/api/schedules')).body as {
      id: number;
      is_default: boolean;
    }[];
    const defaultId = schedules.find((schedule) => schedule.is_default)!.id;
    const { today } = berlinDates();
    // Daily at 12:00 from today: tomorrow is admin's until noon, then mia's.
    const rotation = await stack.api('POST', `/api/schedules/${defaultId}/rotations`, {
      name: 'Noon',
      participant_ids: [stack.admin.id, stack.member.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: today,
      handoff_time: '12:00',
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    try {
      const tomorrow = new Date(`${today}T00:00:00Z`);
      tomorrow.setUTCDate(tomorrow.getUTCDate() + 1);
      const date = tomorrow.toISOString().slice(0, 10);
      const day = (await stack.api('GET', `/api/schedule?from=${date}&to=${date}`)).body as {
        username: string;
      }[];
      assert.deepEqual(
        day.map((entry) => entry.username),
        ['admin', 'mia'],
      );
      const page = await newPage('admin', { phone: true });
      await page.goto(`${stack.url}/schedule`);
      const cell = page.locator(`[data-date="${date}"]`);
      await cell.getByText('mia').waitFor();
      await cell.getByText('admin').waitFor();
      await assertNoHorizontalScroll(page, 'the month page with two people a day');
      // A rotation's day cannot be removed (the server would refuse in API terms), only overridden.
      assert.equal(await cell.getByRole('button', { name: /^Remove / }).count(), 0);
      await cell.getByRole('checkbox', { name: `Select ${date}` }).check();
      await page.getByRole('combobox', { name: 'Person on call' }).selectOption({ label: 'carol' });
      await page.getByRole('button', { name: 'Assign days' }).click();
      await cell.getByRole('button', { name: `Remove carol on ${date}` }).click();
      await cell.getByText('carol').waitFor({ state: 'detached' });
      await cell.getByText('mia').waitFor();
    } finally {
      await stack.api('DELETE', `/api/schedules/${defaultId}/rotations/${rotation.body.id}`);
    }
  });

  test('a schedule page left open moves with the clock: its first row is who is on call now', async () => {
    const created = await stack.api('POST', '/api/schedules', { name: 'Wall display', time_zone: 'UTC' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const today = new Date().toISOString().slice(0, 10);
    const rotation = await stack.api('POST', `/api/schedules/${id}/rotations`, {
      name: 'Daily',
      participant_ids: [stack.admin.id, stack.member.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: today,
      handoff_time: '00:00',
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    try {
      const page = await newPage('admin');
      await page.clock.install({ time: new Date() });
      await page.goto(`${stack.url}/schedules/${id}`);
      const first = page
        .getByRole('list', { name: 'Who is on call, in order' })
        .getByRole('listitem')
        .first();
      await first.getByText('admin', { exact: true }).waitFor();

      // A day later, without a reload: the minute's refresh reads the timeline from the new now.
      await page.clock.fastForward('24:00:00');
      await first.getByText('mia', { exact: true }).waitFor();
    } finally {
      await stack.api('DELETE', `/api/schedules/${id}`);
    }
  });

  test('an override added from a page left open for an hour starts when it is added, not when the page opened', async () => {
    const created = await stack.api('POST', '/api/schedules', {
      name: 'Left open',
      time_zone: 'Europe/Berlin',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    try {
      const page = await newPage('admin');
      await page.clock.install({ time: new Date() });
      await page.goto(`${stack.url}/schedules/${id}`);
      const override = page.getByRole('form', { name: 'Add override' });
      await override.getByLabel('Person covering').selectOption({ label: 'carol' });
      // Back from a meeting an hour later, the admin adds the cover "from now" as the form offers.
      await page.clock.fastForward('01:00:00');
      const added = await page.evaluate(() => Date.now());
      await override.getByRole('button', { name: 'Add override' }).click();
      await page.getByRole('button', { name: /^Delete the override of carol/ }).waitFor();
      const [made] = (
        await stack.api(
          'GET',
          `/api/schedules/${id}/overrides?from=${new Date(added - 3 * 3_600_000).toISOString()}`,
        )
      ).body;
      // An hour early, it rewrote the hour meanwhile as carol's and came too late for a handoff notice.
      const early = (added - Date.parse(made.starts_at)) / 60_000;
      assert.ok(early >= 0 && early < 2, `it starts ${early} minutes before it was added`);
      const hours = (Date.parse(made.ends_at) - Date.parse(made.starts_at)) / 3_600_000;
      assert.ok(hours >= 23 && hours <= 25, `it lasts a day, not ${hours} h`);
      // The form shows the time it sends (the minute may have turned since).
      const shown = await override.getByLabel('From (Europe/Berlin)').inputValue();
      const sentWall = new Intl.DateTimeFormat('sv-SE', {
        timeZone: 'Europe/Berlin',
        dateStyle: 'short',
        timeStyle: 'short',
      })
        .format(new Date(made.starts_at))
        .replace(' ', 'T');
      const turned = (Date.parse(`${shown}Z`) - Date.parse(`${sentWall}Z`)) / 60_000;
      assert.ok(turned === 0 || turned === 1, `the form shows ${shown}; it sent ${sentWall}`);
    } finally {
      await stack.api('DELETE', `/api/schedules/${id}`);
    }
  });

  test('a handoff in the hour the autumn change repeats says which one: Sun 2026-10-25 02:30 CEST', async () => {
    const created = await stack.api('POST', '/api/schedules', {
      name: 'Autumn nights',
      time_zone: 'Europe/Berlin',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    const rotation = await stack.api('POST', `/api/schedules/${id}/rotations`, {
      name: 'Nightly',
      participant_ids: [stack.admin.id, stack.member.id],
      shift_length: 1,
      shift_unit: 'days',
      start_date: '2026-10-20',
      handoff_time: '02:30',
    });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    // 02:30 to 02:30 on the 25th, once on each side of the change: an hour that reads as none.
    const cover = await stack.api('POST', `/api/schedules/${id}/overrides`, {
      user_id: carol,
      starts_at: '2026-10-25T02:30:00+02:00',
      ends_at: '2026-10-25T02:30:00+01:00',
    });
    assert.equal(cover.status, 201, JSON.stringify(cover.body));
    try {
      const page = await newPage('admin');
      await page.clock.install({ time: new Date('2026-10-24T12:00:00Z') });
      await page.goto(`${stack.url}/schedules/${id}`);
      const carolsRow = page
        .getByRole('list', { name: 'Who is on call, in order' })
        .getByRole('listitem')
        .filter({ hasText: 'carol' });
      await carolsRow.waitFor();
      assert.match(
        await carolsRow.innerText(),
        /Sun 2026-10-25 02:30 CEST → Sun 2026-10-25 02:30 CET · override/,
      );
      const listed = page.locator('ul.overrides li').filter({ hasText: 'carol' });
      assert.match(await listed.innerText(), /02:30 CEST → Sun 2026-10-25 02:30 CET/);
      // A time that comes once is shown without a zone, as before.
      assert.match(
        await page.getByRole('list', { name: 'Who is on call, in order' }).innerText(),
        /→ Mon 2026-10-26 02:30 · rotation Nightly/,
      );
    } finally {
      await stack.api('DELETE', `/api/schedules/${id}`);
    }
  });

  test('the new pages: no serious accessibility problem in light, dark and on a phone', async () => {
    for (const [phone, dark] of [
      [false, false],
      [true, false],
      [false, true],
    ] as const) {
      const layout = `${phone ? 'phone' : 'desktop'}${dark ? '-dark' : ''}`;
      const page = await newPage('admin', { phone, dark });
      for (const [name, path] of [
        ['schedules', '/schedules'],
        ['schedule-detail', `/schedules/${scheduleId}`],
        ['me', '/me'],
      ] as const) {
        await page.goto(stack.url + path);
        await page.locator('main h1').first().waitFor();
        await page.waitForLoadState('networkidle').catch(() => {});
        if (name === 'schedule-detail') {
          // The rotation form opens too, so its controls are checked as well.
          await page.getByRole('button', { name: 'New rotation' }).click();
        }
        await assertAccessible(page, `${path} (${layout})`);
        if (phone) await assertNoHorizontalScroll(page, `${path} on a phone`);
        await screenshot(page, `schedules-${name}-${layout}`);
      }
    }
  });
});
