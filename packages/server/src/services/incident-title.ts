import type { AlertGroupNotification } from '../domain/alerts.ts';

/**
 * The longest title an incident gets, in characters. Under `group_by:
 * ['...']` every label is a grouping label, and label values run to 2 KiB
 * each (webhook limits), so a title of every label ran to kilobytes: the
 * subject of an email page, an ntfy notification's title and a queue row.
 */
export const TITLE_LIMIT = 200;
/** The longest grouping label value a title quotes whole. */
const LABEL_VALUE_LIMIT = 40;

/**
 * The incident's title: the group's common summary, else its alert name and
 * grouping labels; a long label value is cut, and so is a title over
 * TITLE_LIMIT characters (with "…").
 *
 * @example incidentTitle({ commonAnnotations: {}, commonLabels: { alertname: 'HighCPU' }, groupLabels: { alertname: 'HighCPU', team: 'db' }, … }) // 'HighCPU (team=db)'
 */
export function incidentTitle(
  notification: Pick<
    AlertGroupNotification,
    'commonAnnotations' | 'commonLabels' | 'groupLabels' | 'alerts' | 'groupKey'
  >,
): string {
  const summary = notification.commonAnnotations.summary;
  if (summary !== undefined && summary.trim() !== '') return cut(summary.trim(), TITLE_LIMIT);
  const name =
    notification.commonLabels.alertname ??
    notification.groupLabels.alertname ??
    notification.alerts[0]?.name ??
    notification.groupKey;
  const others = Object.entries(notification.groupLabels)
    .filter(([key]) => key !== 'alertname')
    .map(([key, value]) => `${key}=${cut(value, LABEL_VALUE_LIMIT)}`);
  return cut(others.length > 0 ? `${name} (${others.join(', ')})` : name, TITLE_LIMIT);
}

/** `text` cut to `limit` characters (code points, so no surrogate pair is split), the last being "…". */
function cut(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const characters = Array.from(text);
  return characters.length <= limit ? text : `${characters.slice(0, limit - 1).join('')}…`;
}
