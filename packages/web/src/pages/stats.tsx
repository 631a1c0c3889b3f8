import { client } from '../api.ts';
import { ErrorNote, formatDuration, Page, useData, useSession } from '../ui.tsx';

interface Bar {
  label: string;
  value: number;
}

/**
 * A plain SVG bar chart: the numbers are also in the accessible table
 * beside it (screen readers and copy-paste), the picture is for the eye.
 */
function BarChart(props: { title: string; bars: Bar[]; horizontal?: boolean }) {
  const max = Math.max(1, ...props.bars.map((bar) => bar.value));
  const { bars } = props;
  const id = props.title.toLowerCase().replace(/\W+/g, '-');
  if (props.horizontal) {
    const rowHeight = 22;
    const height = bars.length * rowHeight;
    return (
      <figure class="chart">
        <figcaption id={id}>{props.title}</figcaption>
        <svg viewBox={`0 0 300 ${Math.max(height, rowHeight)}`} role="img" aria-labelledby={id}>
          {bars.map((bar, index) => (
            <g key={bar.label} transform={`translate(0 ${index * rowHeight})`}>
              <rect class="bar" x="120" y="3" height={rowHeight - 6} width={(bar.value / max) * 150} />
              <text x="116" y={rowHeight / 2 + 4} text-anchor="end" class="chart-label">
                {bar.label.length > 18 ? `${bar.label.slice(0, 17)}…` : bar.label}
              </text>
              <text x={124 + (bar.value / max) * 150} y={rowHeight / 2 + 4} class="chart-value">
                {bar.value}
              </text>
            </g>
          ))}
        </svg>
        <ChartTable bars={bars} />
      </figure>
    );
  }
  const width = 300;
  const plot = 120;
  const step = width / bars.length;
  return (
    <figure class="chart">
      <figcaption id={id}>{props.title}</figcaption>
      <svg viewBox={`0 0 ${width} ${plot + 18}`} role="img" aria-labelledby={id}>
        {bars.map((bar, index) => {
          const height = (bar.value / max) * plot;
          return (
            <g key={bar.label}>
              <rect class="bar" x={index * step + 1} y={plot - height} width={step - 2} height={height}>
                <title>
                  {bar.label}: {bar.value}
                </title>
              </rect>
              {(bars.length <= 7 || index % 3 === 0) && (
                <text x={index * step + step / 2} y={plot + 13} text-anchor="middle" class="chart-label">
                  {bar.label}
                </text>
              )}
            </g>
          );
        })}
      </svg>
      <ChartTable bars={bars} />
    </figure>
  );
}

function ChartTable(props: { bars: Bar[] }) {
  return (
    <details>
      <summary>Numbers</summary>
      <table>
        <tbody>
          {props.bars.map((bar) => (
            <tr key={bar.label}>
              <th scope="row">{bar.label}</th>
              <td>{bar.value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

/** MTTA, MTTR, totals, top alerts, alerts by hour and by weekday. */
export function StatsPage() {
  const { info } = useSession();
  const stats = useData(async () => {
    const [incidents, alerts, top, byHour, byDay] = await Promise.all([
      client.stats.incidents(),
      client.stats.alerts(),
      client.stats.topAlerts(10),
      client.stats.alertsByHour(),
      client.stats.alertsByDay(),
    ]);
    return { incidents, alerts, top, byHour, byDay };
  }, []);
  const data = stats.data;
  return (
    <Page title="Statistics">
      <ErrorNote error={stats.error} />
      {data && (
        <>
          <dl class="tiles">
            <div>
              <dt>Mean time to acknowledge</dt>
              <dd>
                {data.incidents.mtta_seconds === null
                  ? 'no data yet'
                  : formatDuration(data.incidents.mtta_seconds)}
              </dd>
            </div>
            <div>
              <dt>Mean time to resolve</dt>
              <dd>
                {data.incidents.mttr_seconds === null
                  ? 'no data yet'
                  : formatDuration(data.incidents.mttr_seconds)}
              </dd>
            </div>
            <div>
              <dt>Incidents</dt>
              <dd>
                {data.incidents.total}{' '}
                <small>
                  ({data.incidents.triggered} triggered, {data.incidents.acknowledged} acknowledged,{' '}
                  {data.incidents.resolved} resolved)
                </small>
              </dd>
            </div>
            <div>
              <dt>Alerts</dt>
              <dd>
                {data.alerts.total}{' '}
                <small>
                  ({data.alerts.firing} firing, {data.alerts.resolved} resolved)
                </small>
              </dd>
            </div>
          </dl>
          <div class="charts">
            <BarChart
              title="Top alerts"
              horizontal
              bars={data.top.map((entry) => ({ label: entry.name, value: entry.count }))}
            />
            <BarChart
              title={`Alerts by hour of day (${info.time_zone})`}
              bars={data.byHour.map((entry) => ({ label: String(entry.hour), value: entry.count }))}
            />
            <BarChart
              title={`Alerts by weekday (${info.time_zone})`}
              bars={data.byDay.map((entry) => ({ label: entry.day_name.slice(0, 3), value: entry.count }))}
            />
          </div>
        </>
      )}
    </Page>
  );
}
