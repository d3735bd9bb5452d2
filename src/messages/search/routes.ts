import { Elysia } from 'elysia'
import { personRoutes } from '../../access/guards.ts'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { SearchQuery, SearchResponse } from './schema.ts'
import { searchMessages } from './service.ts'

/** The person's search across their own channels (issue 18). */
const personSide = (ctx: Ctx) =>
  personRoutes(ctx).get(
    '/search',
    async ({ person, query }) => await searchMessages(ctx, person.user.id, query),
    {
      query: SearchQuery,
      detail: doc(
        'searchMessages',
        'person',
        'Search my messages: best match first, paged',
        SearchResponse,
        { errors: [400] },
      ),
    },
  )

export const searchRoutes = (ctx: Ctx) => new Elysia({ name: 'hark/search' }).use(personSide(ctx))
