export {
  type CalendarPeriod,
  type CalendarPeriodName,
  type CalendarPeriodOptions,
  compileCalendarPeriod,
  type PeriodBounds,
} from './period'
export { type PeriodAt, periodAt } from './period-at'
export { timeZoneOption } from './time-zone'
