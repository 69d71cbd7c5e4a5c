import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import { api, type UsageBucket } from '../api.js'
import { ErrorNote, useLoad } from '../components.js'
import { count } from '../format.js'
import { type Bucket, byDay, lastBusy, stackTops, total, yAxis } from '../usage-bars.js'

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000

/** The ranges offered, as the history API is asked for them (from inclusive, to exclusive; the current bucket included). */
const RANGES = {
  hour: { label: 'Last hour', granularity: 'minute', step: MINUTE_MS, buckets: 60 },
  day: { label: 'Last day', granularity: 'hour', step: HOUR_MS, buckets: 24 },
  month: { label: 'Last 30 days', granularity: 'hour', step: HOUR_MS, buckets: 720 },
} as const
type RangeName = keyof typeof RANGES

export function rangeBounds(range: RangeName, now: number): { from: string; to: string } {
  const { step, buckets } = RANGES[range]
  const to = Math.floor(now / step) * step + step
  return { from: new Date(to - buckets * step).toISOString(), to: new Date(to).toISOString() }
}

/** The three outcomes charted, in the API's field names, with their colours (stacked in this order, bottom up). */
const SERIES = [
  { field: 'allowed', label: 'Allowed', stroke: '#2e7d32', fill: 'rgba(46,125,50,0.75)' },
  { field: 'rateLimited', label: 'Rate-limited', stroke: '#ef6c00', fill: 'rgba(239,108,0,0.75)' },
  { field: 'banned', label: 'Banned', stroke: '#c62828', fill: 'rgba(198,40,40,0.75)' },
] as const

/**
 * The key's requests over time (allowed, rate-limited, banned), from GET .../usage/history, drawn
 * with uPlot. The totals of the range are on the chart's element (data-allowed, data-rate-limited,
 * data-banned) and written under it.
 */
export function UsageChart({
  keyId,
  rotated,
  history: load,
  title = 'Usage over time',
}: {
  /** The key's id, or the id of whatever `history` reads (a customer's). */
  keyId: string
  rotated: boolean
  /** Another history than the key's (a customer's: the sum of its keys'). */
  history?: (query: { granularity: 'minute' | 'hour'; from: string; to: string }) => Promise<{ data: UsageBucket[] }>
  /** The heading: what the bars count (a customer's key says they are its own, not its customer's). */
  title?: string
}) {
  const [range, setRange] = useState<RangeName>('hour')
  const [scope, setScope] = useState<'key' | 'chain'>('key')
  // The range travels with its buckets: while the next range loads, the chart still shows the last
  // one, and its step and data-range must be that one's, not the button just pressed.
  const history = useLoad(async () => {
    const { granularity } = RANGES[range]
    const query = { granularity, ...rangeBounds(range, Date.now()) }
    return { range, buckets: (await (load ? load(query) : api.usageHistory(keyId, { ...query, scope }))).data }
  }, [keyId, range, scope])
  const totals = history.value ? sum(history.value.buckets) : undefined
  // The 30 days are drawn by day: 720 hourly bars would each be a pixel wide.
  // Memoised: a new array would redraw the chart on every hover.
  const bars = useMemo(
    () => (history.value ? (history.value.range === 'month' ? byDay(history.value.buckets) : history.value.buckets) : []),
    [history.value],
  )
  const step = history.value ? (history.value.range === 'month' ? DAY_MS : RANGES[history.value.range].step) : MINUTE_MS
  // The bucket whose figures are written under the chart: the hovered one, else the last with traffic.
  const [hovered, setHovered] = useState<number | undefined>(undefined)
  const shown = (hovered === undefined ? undefined : bars[hovered]) ?? lastBusy(bars)
  return (
    <section class="usage-chart">
      <header class="page-head">
        <h2>{title}</h2>
        <fieldset class="segmented" aria-label="Range">
          {(Object.keys(RANGES) as RangeName[]).map((name) => (
            <button type="button" aria-pressed={range === name} onClick={() => setRange(name)}>
              {RANGES[name].label}
            </button>
          ))}
        </fieldset>
        {rotated && (
          <fieldset class="segmented" aria-label="Scope">
            <button type="button" aria-pressed={scope === 'key'} onClick={() => setScope('key')}>
              This key
            </button>
            <button type="button" aria-pressed={scope === 'chain'} onClick={() => setScope('chain')}>
              Whole chain
            </button>
          </fieldset>
        )}
        <button type="button" onClick={history.reload}>
          Refresh
        </button>
      </header>
      <ErrorNote message={history.error} />
      {history.value && totals && (
        <div
          class="chart"
          data-range={history.value.range}
          data-buckets={history.value.buckets.length}
          data-allowed={totals.allowed}
          data-rate-limited={totals.rateLimited}
          data-banned={totals.banned}
        >
          <Plot buckets={bars} step={step} onHover={setHovered} />
          {shown && (
            <p
              class="bucket-totals"
              data-start={shown.start}
              data-total={total(shown)}
              data-allowed={shown.allowed}
              data-rate-limited={shown.rateLimited}
              data-banned={shown.banned}
            >
              {bucketName(shown.start, step)}: <strong>{count(total(shown))}</strong> requests ({count(shown.allowed)} allowed,{' '}
              {count(shown.rateLimited)} rate-limited, {count(shown.banned)} banned)
            </p>
          )}
          <p class="period-total" data-total={total(totals)}>
            {RANGES[history.value.range].label}: <strong>{count(total(totals))}</strong> requests
          </p>
          <p class="totals">
            {SERIES.map((s) => (
              <span class={`total total-${s.field}`}>
                {s.label}: <strong>{count(totals[s.field])}</strong>
              </span>
            ))}
          </p>
        </div>
      )}
    </section>
  )
}

function sum(buckets: UsageBucket[]) {
  const totals = { allowed: 0, rateLimited: 0, banned: 0 }
  for (const b of buckets) {
    totals.allowed += b.allowed
    totals.rateLimited += b.rateLimited
    totals.banned += b.banned
  }
  return totals
}

const DAY_S = 86_400
const DAY_MS = DAY_S * 1000

/** A bucket's name in the figures under the chart: its UTC start, to the minute or the day. */
function bucketName(start: string, step: number): string {
  return step >= DAY_MS ? `${start.slice(0, 10)} (UTC)` : `${start.slice(0, 10)} ${start.slice(11, 16)} UTC`
}
/** A Unix time in seconds as UTC text: `2030-01-01T09:05` cut to the parts wanted. */
const utc = (seconds: number) => new Date(seconds * 1000).toISOString()

/**
 * The x axis's tick labels, 24-hour UTC like every time of the console (uPlot's default is 12-hour
 * local time, "4:15am"): the date alone when ticks are a day or more apart, otherwise the time,
 * with the date under it on the first tick and where the day changes.
 */
export function utcTickLabels(splits: number[], increment: number): string[] {
  if (increment >= DAY_S) return splits.map((s) => utc(s).slice(5, 10))
  return splits.map((s, i) => {
    const [date, time] = [utc(s).slice(5, 10), utc(s).slice(11, 16)]
    const previous = i === 0 ? undefined : utc(splits[i - 1]!).slice(5, 10)
    return previous === date ? time : `${time}\n${date}`
  })
}

/**
 * The uPlot chart itself, redrawn when the buckets change and resized with its container. Stacked
 * bars: each series is drawn at its stacked top (allowed, +rate-limited, +banned), the highest first
 * so the lower ones paint over it; the legend shows each part's own count, not the stacked top.
 */
function Plot({ buckets, step, onHover }: { buckets: Bucket[]; step: number; onHover: (index: number | undefined) => void }) {
  const host = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = host.current
    if (element === null) return
    const starts = buckets.map((b) => Date.parse(b.start) / 1000)
    const first = starts[0] ?? 0
    const end = (starts.at(-1) ?? 0) + step / 1000
    const tops = stackTops(buckets)
    const y = yAxis(Math.max(0, ...tops[2]))
    const order = [2, 1, 0] as const
    const data: uPlot.AlignedData = [starts, ...order.map((i) => tops[i])]
    const plot = new uPlot(
      {
        width: Math.max(320, element.clientWidth),
        height: 260,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // The top a labelled step at or above the tallest bar (usage-bars.ts), with a gridline at each step.
        scales: { x: { time: true, range: () => [first, end] }, y: { range: () => [0, y.top] } },
        axes: [
          { label: 'Time (UTC)', values: (_u, splits, _axis, _space, increment) => utcTickLabels(splits, increment) },
          { label: 'requests', size: 60, splits: () => y.splits },
        ],
        cursor: { points: { show: false } },
        hooks: {
          setCursor: [(u) => onHover(u.cursor.idx ?? undefined)],
          // What the y axis shows, for what drives the console: its labelled values and the scale's top.
          draw: [
            (u) => {
              element.dataset.yLabels = ((u.axes[1] as { _splits?: number[] })._splits ?? []).join(' ')
              element.dataset.yTop = String(u.scales.y!.max)
            },
          ],
        },
        series: [
          {
            label: step === MINUTE_MS ? 'Minute (UTC)' : step === HOUR_MS ? 'Hour (UTC)' : 'Day (UTC)',
            // The hovered bucket's start in the legend, in the same words as the axis.
            value: (_u, v) => (v == null ? '—' : `${utc(v).slice(0, 10)} ${utc(v).slice(11, 16)} UTC`),
          },
          ...order.map((i) => {
            const s = SERIES[i]
            return {
              label: s.label,
              stroke: s.stroke,
              fill: s.fill,
              width: 0,
              paths: uPlot.paths.bars?.({ align: 1, size: [0.85, Number.POSITIVE_INFINITY, 2] }),
              points: { show: false },
              value: (_u: uPlot, _v: number | null, _si: number, idx: number | null) =>
                idx == null || buckets[idx] === undefined ? '—' : count(buckets[idx]![s.field]),
            }
          }),
        ],
      },
      data,
      element,
    )
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(320, element.clientWidth), height: 260 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [buckets, step, onHover])
  return <div ref={host} class="plot" />
}
