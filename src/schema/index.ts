import { builder } from './builder.js';
import './channel.js';
import './properties.js';
import './search.js';

export const schema = builder.toSchema({ sortSchema: true });
