/** The GraphQL transport: the served schema, the Yoga instance, its plugins and error masking, the cost rules, graphql-ws, the GraphiQL page. */
export { createGraphQL, type GraphQLServer, type GraphQLServerContext, type Yoga } from './yoga.js';
export { renderGraphiQLPage, type GraphiQLPage } from './graphiql/page.js';
export { maskError } from './maskError.js';
export { servedSchema } from './schema.js';
export { documentCost, QUERY_COST, type QueryCostOptions } from './cost.js';
export { loadPersistedOperations, operationHash } from './plugins/persistedOperations.js';
export { attachGraphQLWs, type GraphQLWs } from './ws.js';
