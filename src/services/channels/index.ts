/** The public face of channels: what other modules may use. */
export { channelRules, getChannel, updateChannel, type ChannelProfile } from './channels.js';
export {
  createChannel,
  ensureOperatorCredential,
  isOperatorToken,
  rotateClientSecret,
  rotateKey,
  seedDemoChannel,
  setAppStatus,
  setIpAllowList,
  setRateLimit,
  showChannel,
  topUp,
  type AppSummary,
  type ChannelWithBalance,
  type IssuedCredentials,
  type NewChannel,
} from './operator.js';
