/** The GraphQL transport: the served schema, the Yoga instance, its plugins and error masking, the cost rules, graphql-ws. */
export { createGraphQL, type GraphQLServer, type GraphQLServerContext, type Yoga } from './yoga.js';
export { maskError } from './maskError.js';
export { servedSchema } from './schema.js';
export { documentCost, QUERY_COST, type QueryCostOptions } from './cost.js';
export { loadPersistedOperations, operationHash } from './plugins/persistedOperations.js';
export { attachGraphQLWs, type GraphQLWs } from './ws.js';
