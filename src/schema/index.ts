import { builder } from './builder.js';
import './channel.js';

export const schema = builder.toSchema({ sortSchema: true });
